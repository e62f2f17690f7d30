"""`{name}` templates of tool URLs and citation titles: their variables, and safe rendering.

A URL template may use variables only in its path and query (never in the scheme, host or port, so no
argument can choose where a call goes); every value is percent-encoded as one path segment or query value.
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


def render_url(template: str, values: Mapping[str, Any]) -> str:
    """The URL with each variable replaced by its percent-encoded value (no '/' or '?' can slip in)."""

    def replace(match: re.Match[str]) -> str:
        return quote(str(values[match.group(1).strip()]), safe="")

    return VARIABLE.sub(replace, template)


def render_text(template: str, values: Mapping[str, Any], *, limit: int = 200) -> str:
    """A citation title: each `{path}` replaced by its value (missing values become '?'), capped."""

    def replace(match: re.Match[str]) -> str:
        value = values.get(match.group(1).strip())
        return "?" if value is None or value == "" else str(value)

    text = " ".join(VARIABLE.sub(replace, template).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
