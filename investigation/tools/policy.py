"""The role policy of tools, enforced in code: may this investigation call this tool, and with which
arguments. Arguments come only from the investigation's context or from validated extraction out of the
question — the functions here are never given retrieved text, so a passage cannot choose an argument.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from investigation.errors import ToolRefused
from investigation.tools.declaration import ParamSpec, ToolDeclaration
from investigation.tools.templates import path_variables, unsafe_path_value

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


@dataclass(frozen=True)
class CallScope:
    """What the policy judges a call by: the route, who reads the answer, the context, the question."""

    route: str
    audience: str
    question: str
    context: Mapping[str, Any] = field(default_factory=dict)

    @property
    def requester_email(self) -> str | None:
        value = context_value(self.context, "requester.email")
        return str(value) if value else None


def context_value(context: Mapping[str, Any], path: str) -> Any:
    """`requester.email`, `account_id`, `attributes.plan` … out of the context (None when absent)."""
    node: Any = context
    if path.startswith("attributes."):
        attributes = context.get("attributes") or {}
        return attributes.get(path.removeprefix("attributes.")) if isinstance(attributes, Mapping) else None
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _unanchored(pattern: str) -> str:
    return pattern.removeprefix("^").removesuffix("$")


def _coerce(spec: ParamSpec, raw: str) -> Any:
    kind = spec.json_schema.get("type")
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
    except ValueError:
        return raw
    if kind == "boolean":
        return raw.casefold() in ("true", "yes", "1")
    return raw


def _valid(spec: ParamSpec, value: Any) -> bool:
    return not any(True for _ in Draft202012Validator(spec.json_schema).iter_errors(value))


def extract(spec: ParamSpec, question: str) -> list[Any]:
    """Candidate values of a question-sourced parameter, each valid against its schema."""
    found: list[Any] = []
    if "enum" in spec.json_schema:
        for option in spec.json_schema["enum"]:
            if re.search(rf"(?<!\w){re.escape(str(option))}(?!\w)", question, re.IGNORECASE):
                found.append(option)
    if "pattern" in spec.json_schema:
        for match in re.finditer(_unanchored(str(spec.json_schema["pattern"])), question):
            found.append(_coerce(spec, match.group(0)))
    return [v for v in dict.fromkeys(found) if _valid(spec, v)]


def refusal(decl: ToolDeclaration, scope: CallScope) -> str | None:
    """Why this investigation may not call `decl` at all (None: allowed)."""
    policy = decl.policy
    if scope.route not in policy.routes:
        return f"route {scope.route} is not allowed (allowed: {', '.join(policy.routes)})"
    if scope.audience not in policy.audiences:
        return f"audience {scope.audience} may not see this tool's output"
    if policy.requires_requester and not scope.requester_email:
        return "an identified requester is required"
    if policy.subject == "requester":
        named = _other_identity(decl, scope)
        if named:
            return (
                f"the question names another identity ({named}); this tool answers only about the requester"
            )
    return None


def _other_identity(decl: ToolDeclaration, scope: CallScope) -> str | None:
    """A value in the question that looks like a context-sourced identifier but is not the requester's."""
    own = scope.requester_email
    for email in EMAIL.findall(scope.question):
        if own is None or str(email).casefold() != own.casefold():
            return str(email)
    for name in decl.policy.identifiers:
        spec = decl.params[name]
        path = spec.context_path
        if path is None:
            continue
        mine = context_value(scope.context, path)
        for candidate in extract(spec, scope.question):
            if mine is None or str(candidate).casefold() != str(mine).casefold():
                return str(candidate)
    return None


def _final(decl: ToolDeclaration, args: dict[str, Any]) -> dict[str, Any]:
    for name, spec in decl.params.items():
        if name not in args:
            if spec.required or name in decl.url_variables:
                raise ToolRefused(decl.name, f"no value for required parameter {name}")
            continue
        if not _valid(spec, args[name]):
            raise ToolRefused(decl.name, f"parameter {name} does not match its schema")
        if name in path_variables(decl.url) and unsafe_path_value(args[name]):
            raise ToolRefused(decl.name, f"parameter {name} would change the URL's path (empty, '.' or '..')")
    return args


def resolve_arguments(decl: ToolDeclaration, scope: CallScope) -> dict[str, Any]:
    """The call's arguments from the context and the question only; ToolRefused when outside policy."""
    reason = refusal(decl, scope)
    if reason:
        raise ToolRefused(decl.name, reason)
    args: dict[str, Any] = {}
    for name, spec in decl.params.items():
        if spec.context_path is not None:
            value = context_value(scope.context, spec.context_path)
            if value is not None and value != "":
                args[name] = value
            continue
        candidates = extract(spec, scope.question)
        if len(candidates) > 1:
            raise ToolRefused(decl.name, f"the question names {len(candidates)} values for {name}")
        if candidates:
            args[name] = candidates[0]
    return _final(decl, args)


def check_proposed(decl: ToolDeclaration, scope: CallScope, proposed: Mapping[str, Any]) -> dict[str, Any]:
    """Validate arguments a model chose: a context parameter must equal the context's value, a question
    parameter must appear in the question; unknown names, schema violations → ToolRefused."""
    reason = refusal(decl, scope)
    if reason:
        raise ToolRefused(decl.name, reason)
    unknown = sorted(set(proposed) - set(decl.params))
    if unknown:
        raise ToolRefused(decl.name, f"unknown argument(s) {', '.join(unknown)}")
    args: dict[str, Any] = {}
    for name, value in proposed.items():
        spec = decl.params[name]
        if spec.context_path is not None:
            expected = context_value(scope.context, spec.context_path)
            if expected is None or str(value) != str(expected):
                raise ToolRefused(decl.name, f"argument {name}={value!r} is not the investigation's "
                                             f"{spec.context_path}")
            args[name] = expected
        else:
            if value not in extract(spec, scope.question):
                raise ToolRefused(decl.name, f"argument {name}={value!r} does not appear in the question")
            args[name] = value
    for name, spec in decl.params.items():  # context values the model left out are filled, never guessed
        if name not in args and spec.context_path is not None:
            value = context_value(scope.context, spec.context_path)
            if value is not None and value != "":
                args[name] = value
    return _final(decl, args)


def allowed(declarations: list[ToolDeclaration], scope: CallScope) -> list[ToolDeclaration]:
    """The declarations this investigation may call (the rest are refused by `refusal`)."""
    return [d for d in declarations if refusal(d, scope) is None]
