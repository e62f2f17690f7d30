"""`select:` — the items of a list result that an id named in the question picks out ("has my order
BC-204117 shipped?" → that order of the requester's orders). It only narrows the requester's own result
(after the owner check): an id the result does not hold is said plainly, never looked up elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from investigation.tools.declaration import ToolDeclaration


@dataclass(frozen=True)
class Narrowed:
    """The result narrowed to the named items, and the named ids it does not hold."""

    document: dict[str, Any]
    named: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def named_in_question(decl: ToolDeclaration, question: str) -> list[str]:
    """The ids the declaration's `select.from_question` pattern finds in the question, in order."""
    if decl.select is None:
        return []
    pattern = decl.select.from_question.removeprefix("^").removesuffix("$")
    return list(dict.fromkeys(m.group(0) for m in re.finditer(pattern, question)))


def _at(node: Any, path: str) -> Any:
    for part in path.split(".") if path else []:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def narrow(decl: ToolDeclaration, document: Mapping[str, Any], question: str) -> Narrowed:
    """`document` with its `select` list holding only the items the question names (unchanged when the
    question names none)."""
    named = named_in_question(decl, question)
    if decl.select is None or not named:
        return Narrowed(dict(document))
    head, _, rest = decl.select.field.partition("[].")
    items = _at(document, head)
    if not isinstance(items, list):
        return Narrowed(dict(document), tuple(named), tuple(named))
    wanted = {n.casefold() for n in named}
    kept = [i for i in items if isinstance(i, Mapping) and str(_at(i, rest)).casefold() in wanted]
    held = {str(_at(i, rest)).casefold() for i in kept}
    missing = tuple(n for n in named if n.casefold() not in held)
    return Narrowed(replaced_list(document, head, kept), tuple(named), missing)


def replaced_list(document: Mapping[str, Any], head: str, items: list[Any]) -> dict[str, Any]:
    """A copy of `document` with the list at dotted path `head` replaced by `items`."""
    out = dict(document)
    name, _, rest = head.partition(".")
    if rest:
        child = out.get(name)
        out[name] = replaced_list(child if isinstance(child, Mapping) else {}, rest, items)
    else:
        out[name] = items
    return out


def missing_sentence(decl: ToolDeclaration, missing: tuple[str, ...]) -> str:
    """How the answer says that named items are not among the requester's (no other data of them)."""
    item = decl.select.field.partition("[]")[0].rsplit(".", 1)[-1] if decl.select else "item"
    noun = item[:-1] if item.endswith("s") and len(item) > 3 else item
    return f"I can't look up {noun} {' or '.join(missing)} for your account."
