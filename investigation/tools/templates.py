"""`{name}` templates of tool URLs and citation titles: their variables, and safe rendering.

A URL template may use variables only in its path and query (never in the scheme, host or port, so no
argument can choose where a call goes); every value is percent-encoded as one path segment or query value,
and no value may change the path's shape: `.`, `..` and empty path values are refused (an HTTP client
removes dot segments, so `..` would reach another path of the API with the tool's credentials), and the
rendered path must have the template's number of segments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from investigation.errors import ValidationFailed

VARIABLE = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_-]*)*")


def variables(template: str) -> list[str]:
    """The variable names of `template`, in order of first use."""
    return list(dict.fromkeys(m.group(1).strip() for m in VARIABLE.finditer(template)))


def check_url_template(field: str, template: str, known: set[str]) -> list[str]:
    """The URL template's variables; ValidationFailed when it is not an absolute http(s) URL, names a
    variable outside `known`, or puts a variable in the scheme, host or port."""
    if template.count("{") != template.count("}"):
        raise ValidationFailed(field, "unbalanced braces in the URL template")
    names = variables(template)
    for name in names:
        if not _NAME.fullmatch(name):
            raise ValidationFailed(field, f"{{{name}}} is not a valid variable name")
        if name not in known:
            raise ValidationFailed(field, f"unknown template variable {{{name}}}; declared parameters: "
                                          f"{', '.join(sorted(known)) or 'none'}")
    probe = VARIABLE.sub("x", template)
    parts = urlsplit(probe)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationFailed(field, "must be an absolute http:// or https:// URL")
    authority = urlsplit(template).netloc
    if "{" in authority or "{" in urlsplit(template).scheme:
        raise ValidationFailed(field, "template variables may appear only in the path and query, "
                                      "never in the scheme, host or port")
    if parts.username or parts.password:
        raise ValidationFailed(field, "credentials in the URL are not allowed; declare `auth` instead")
    return names


def _path_of(template: str) -> str:
    return re.split(r"[?#]", template, maxsplit=1)[0]


def path_variables(template: str) -> list[str]:
    """The variables of the URL template's path (before any `?`)."""
    return variables(_path_of(template))


def unsafe_path_value(value: Any) -> bool:
    """A path value that would change the path's shape once sent (empty, `.` or `..`)."""
    return str(value).strip() in ("", ".", "..")


def render_url(template: str, values: Mapping[str, Any]) -> str:
    """The URL with each variable replaced by its percent-encoded value (no '/' or '?' can slip in);
    ValidationFailed (naming the parameter, never its value) when a value would change the path's shape."""
    in_path = set(path_variables(template))

    def replace(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        value = values[name]
        if name in in_path and unsafe_path_value(value):
            raise ValidationFailed(
                f"params.{name}", "an empty, '.' or '..' value would change the URL's path"
            )
        return quote(str(value), safe="")

    path, rest = _path_of(template), template[len(_path_of(template)):]
    rendered_path = VARIABLE.sub(replace, path)
    declared = urlsplit(VARIABLE.sub("x", path)).path.split("/")
    sent = urlsplit(rendered_path).path.split("/")
    dots = (".", "..")
    if len(sent) != len(declared) or any(
        s in dots and d not in dots for s, d in zip(sent, declared, strict=True)
    ):
        raise ValidationFailed("url", "the rendered path does not have the declared shape")
    return rendered_path + VARIABLE.sub(replace, rest)


def render_text(template: str, values: Mapping[str, Any], *, limit: int = 200) -> str:
    """A citation title: each `{path}` replaced by its value (missing values become '?'), capped."""

    def replace(match: re.Match[str]) -> str:
        value = values.get(match.group(1).strip())
        return "?" if value is None or value == "" else str(value)

    text = " ".join(VARIABLE.sub(replace, template).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
