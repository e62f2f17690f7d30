"""Whose record a tool result is: every result is checked against the requester before it becomes
evidence, on a fresh call and on a cache hit alike. A record (or list item) whose declared owner field is
not the requester's is dropped for a customer audience and kept, marked, for agents. Reasons name fields,
never values, so the trace of a refusal carries nothing of the other customer's record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from investigation.tools.declaration import ToolDeclaration
from investigation.tools.narrowing import replaced_list
from investigation.tools.policy import context_value

IDENTITY_FIELDS = ("requester.email", "account_id")


@dataclass(frozen=True)
class OwnerVerdict:
    """What of a result may become evidence: `document` (None: nothing), how many records were not the
    requester's, and the sentence that says so (for the trace, or the agent's marked evidence)."""

    document: dict[str, Any] | None
    foreign: int = 0
    reason: str | None = None
    kept_marked: bool = False


def requester_identity(decl: ToolDeclaration, context: Mapping[str, Any]) -> str:
    """Who is asking, as a cache-key part: the requester's e-mail, account and the owner check's field."""
    paths = list(IDENTITY_FIELDS)
    if decl.owner is not None and decl.owner.checks:
        paths.append(decl.owner.context_path)
    values = {path: _norm(context_value(context, path)) for path in dict.fromkeys(paths)}
    return json.dumps(values, sort_keys=True)


def _norm(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value).strip().casefold()


def _at(node: Any, path: str) -> Any:
    for part in path.split(".") if path else []:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _same(value: Any, expected: str | None) -> bool:
    return expected is not None and not isinstance(value, Mapping | list) and _norm(value) == expected


def check_owner(decl: ToolDeclaration, document: Mapping[str, Any], context: Mapping[str, Any],
                audience: str) -> OwnerVerdict:
    """The part of `document` (the stored projection) that may become evidence for this requester."""
    owner = decl.owner
    if owner is None or not owner.checks or owner.field is None:
        return OwnerVerdict(dict(document))
    expected = _norm(context_value(context, owner.context_path))
    if "[]" in owner.field:
        head, _, rest = owner.field.partition("[].")
        items = _at(document, head)
        if items is None:
            return OwnerVerdict(dict(document))  # no list, no record of anyone
        if not isinstance(items, list):
            items = [items]
        mine = [item for item in items if isinstance(item, Mapping) and _same(_at(item, rest), expected)]
        foreign = len(items) - len(mine)
        if not foreign:
            return OwnerVerdict(dict(document))
        if audience == "agent":
            return OwnerVerdict(dict(document), foreign, _reason(decl, foreign, kept=True), kept_marked=True)
        kept = replaced_list(document, head, mine) if mine else None
        return OwnerVerdict(kept, foreign, _reason(decl, foreign, kept=False))
    if _same(_at(document, owner.field), expected):
        return OwnerVerdict(dict(document))
    if audience == "agent":
        return OwnerVerdict(dict(document), 1, _reason(decl, 1, kept=True), kept_marked=True)
    return OwnerVerdict(None, 1, _reason(decl, 1, kept=False))


def _reason(decl: ToolDeclaration, count: int, *, kept: bool) -> str:
    assert decl.owner is not None
    records = "1 record" if count == 1 else f"{count} records"
    what = f"{records} whose {decl.owner.field} is not the requester's {decl.owner.context_path}"
    return f"{what}: kept and marked for the agent" if kept else f"{what}: dropped"


def agent_notice(verdict: OwnerVerdict) -> str:
    """The mark an agent's evidence carries when it holds records that are not the requester's."""
    if not verdict.kept_marked:
        return ""
    return (f"Note for the agent: this result holds {verdict.foreign} record(s) that do not belong to the "
            "requester; do not share them with the customer.")


def not_yours_sentence(decl: ToolDeclaration, args: Mapping[str, Any]) -> str:
    """How an answer says that a named item cannot be looked up for this requester (no value of it)."""
    named = [f"{_label(name)} {args[name]}" for name in decl.question_params if name in args]
    what = " and ".join(named) if named else f"that {decl.display_name} record"
    return f"I can't look up {what} for your account."


def _label(param: str) -> str:
    for suffix in ("_id", "_number", "_no", "_ref", "_code"):
        if param.endswith(suffix) and len(param) > len(suffix):
            return param.removesuffix(suffix).replace("_", " ")
    return param.replace("_", " ")
