"""Projection of a tool's JSON response onto its declared fields, and the evidence text made from it.

Only projected fields survive: everything else (card numbers, internal notes, tokens) is dropped here,
before grading, the trace, the cache or any prompt sees the response. Paths are dotted names, `[]` after
a name walks every item of a list: ``account.plan``, ``invoices[].status``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from investigation.errors import ValidationFailed

PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\[\])?(\.[A-Za-z_][A-Za-z0-9_-]*(\[\])?)*")
MAX_ITEMS = 20  # list items kept per list
MAX_STRING = 500  # characters kept per string value
MAX_TEXT = 4000  # characters of evidence text per call


def check_path(field: str, path: str) -> str:
    if not isinstance(path, str) or not PATH.fullmatch(path):
        raise ValidationFailed(field, f"{path!r} is not a field path (e.g. account.plan, invoices[].status)")
    return path


def _steps(path: str) -> list[tuple[str, bool]]:
    return [(part[:-2], True) if part.endswith("[]") else (part, False) for part in path.split(".")]


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else value[: MAX_STRING - 1] + "…"
    if value is None or isinstance(value, bool | int | float):
        return value
    return None  # an object or list where a leaf was declared: not projected


def _take(node: Any, steps: list[tuple[str, bool]]) -> Any:
    """The part of `node` reached by `steps`, as a new structure (None when absent)."""
    if not steps:
        return _scalar(node)
    if not isinstance(node, Mapping):
        return None
    (name, each), rest = steps[0], steps[1:]
    if name not in node:
        return None
    child = node[name]
    if each:
        if not isinstance(child, list):
            return None
        items = [_take(item, rest) for item in child[:MAX_ITEMS]]
        return {name: items}
    value = _take(child, rest)
    return None if value is None else {name: value}


def _merge(into: dict[str, Any], part: Mapping[str, Any]) -> None:
    for key, value in part.items():
        if key in into and isinstance(into[key], dict) and isinstance(value, Mapping):
            _merge(into[key], value)
        elif key in into and isinstance(into[key], list) and isinstance(value, list):
            merged = []
            for old, new in zip(into[key], value, strict=False):
                if isinstance(old, dict) and isinstance(new, Mapping):
                    _merge(old, new)
                    merged.append(old)
                else:
                    merged.append(old if new is None else new)
            into[key] = merged
        else:
            into[key] = dict(value) if isinstance(value, Mapping) else value


def project(payload: Any, paths: Sequence[str]) -> dict[str, Any]:
    """A new document holding only `paths` of `payload` (a top-level list is walked as `items[]`)."""
    root = {"items": payload} if isinstance(payload, list) else payload
    out: dict[str, Any] = {}
    for path in paths:
        part = _take(root, _steps(path))
        if isinstance(part, Mapping):
            _merge(out, part)
    return out


def flatten(document: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf values by path (`invoices[1].status`), lists numbered from 1, in document order."""
    flat: dict[str, Any] = {}
    if isinstance(document, Mapping):
        for key, value in document.items():
            flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(document, list):
        for i, value in enumerate(document, start=1):
            flat.update(flatten(value, f"{prefix}[{i}]"))
    elif document is not None:
        flat[prefix] = document
    return flat


def leaf_values(document: Any) -> dict[str, Any]:
    """Values a title template may use: full paths, and `a.b` for the first item of `a[].b`."""
    values: dict[str, Any] = {}
    for path, value in flatten(document).items():
        values.setdefault(path, value)
        values.setdefault(re.sub(r"\[\d+\]", "", path), value)
    return values


def summary_sentences(templates: Sequence[str], document: Mapping[str, Any], params: Mapping[str, Any],
                      *, max_items: int = 5) -> list[str]:
    """Each template rendered with the document's values: once per item of the list it walks (`a[].b`),
    and skipped wherever a value it names is absent (so a field hidden from this audience never shows)."""
    out: list[str] = []
    for template in templates:
        names = [m.group(1).strip() for m in re.finditer(r"\{([^{}]*)\}", template)]
        lists = {n.split("[]", 1)[0] for n in names if "[]" in n}
        rows: list[dict[str, Any]] = []
        if len(lists) == 1:
            (head,) = lists
            items = _at(document, head)
            for item in (items if isinstance(items, list) else [])[:max_items]:
                rows.append({n: (_at(item, n.split("[].", 1)[1]) if n.startswith(head + "[].")
                                 else _value(document, params, n)) for n in names})
        elif not lists:
            rows.append({n: _value(document, params, n) for n in names})
        for row in rows:
            if all(v is not None and v != "" for v in row.values()):
                out.append(_fill(template, row))
    return out


def _fill(template: str, row: Mapping[str, Any]) -> str:
    return re.sub(r"\{([^{}]*)\}", lambda m: str(row[m.group(1).strip()]), template)


def _at(node: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _value(document: Mapping[str, Any], params: Mapping[str, Any], name: str) -> Any:
    return params[name] if name in params else _at(document, name)


def _label(path: str) -> str:
    return path.replace("_", " ")


def evidence_text(title: str, document: Mapping[str, Any], summary: Sequence[str] = ()) -> str:
    """The projected payload as readable evidence: the declaration's summary sentences when it has any
    (the tenant's wording of the result), else one `field: value` statement per leaf."""
    said = " ".join(s.strip() for s in summary)
    parts = [f"{_label(path)}: {value}" for path, value in flatten(document).items()]
    facts = "; ".join(parts) + "." if parts else "No data returned."
    text = said or f"{title}: {facts}"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
