"""Projection of a tool's JSON response onto its declared fields, and the evidence text made from it.

Only projected fields survive: everything else (card numbers, internal notes, tokens) is dropped here,
before grading, the trace, the cache or any prompt sees the response. Paths are dotted names, `[]` after
a name walks every item of a list: ``account.plan``, ``invoices[].status``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from investigation.errors import ValidationFailed
from investigation.guards import carries_instructions, untrusted

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


# An API's free-text field (a status note, a customer comment) is never addressed to an assistant: a field
# that speaks to one, or tells it to set aside its instructions, is an injection wherever it sits.
_ORDERS_TO_AN_ASSISTANT = re.compile(
    r"\b(?:assistant|ai|bot|chatbot|model|agent)\s*[,:]\s*(?:please\s+)?(?:ignore|disregard|forget|tell|say|"
    r"reveal|call|look\s+up|send|refund|do\s+not)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:your|the|my)?\s*(?:previous|prior|above|earlier|"
    r"system)?\s*(?:instructions?|rules|prompts?)\b", re.IGNORECASE)


def injected_field(text: str) -> bool:
    """True when a record's text field carries orders for an AI (the passage guards, plus the shapes a
    one-field injection takes)."""
    return untrusted(text) or carries_instructions(text) or _ORDERS_TO_AN_ASSISTANT.search(text) is not None


def fence(document: Any, suspicious: Callable[[str], bool], prefix: str = "") -> tuple[Any, list[str]]:
    """`document` without its string fields that `suspicious` flags (an instruction planted in a free-text
    note), and the paths dropped: one injected field is fenced off, the rest of the record stays evidence."""
    dropped: list[str] = []
    if isinstance(document, Mapping):
        kept: dict[str, Any] = {}
        for key, value in document.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, str) and suspicious(value):
                dropped.append(path)
                continue
            kept[key], inner = fence(value, suspicious, path)
            dropped.extend(inner)
        return kept, dropped
    if isinstance(document, list):
        items = []
        for value in document:
            if isinstance(value, str) and suspicious(value):
                dropped.append(f"{prefix}[]")
                continue
            item, inner = fence(value, suspicious, f"{prefix}[]")
            items.append(item)
            dropped.extend(inner)
        return items, dropped
    return document, dropped


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


def render_value(value: Any) -> str:
    """How a value reads in a sentence: booleans as yes/no (never Python's True/False), whole floats
    without ".0"; strings (dates included) exactly as the API sent them."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _fill(template: str, row: Mapping[str, Any]) -> str:
    return re.sub(r"\{([^{}]*)\}", lambda m: render_value(row[m.group(1).strip()]), template)


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
    parts = [f"{_label(path)}: {render_value(value)}" for path, value in flatten(document).items()]
    facts = "; ".join(parts) + "." if parts else "No data returned."
    text = said or f"{title}: {facts}"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
