"""Which name of a passage is the place a chain question asks for: "the state where X is" is the region a
location apposition ends with ("near Middletown, Virginia"), "X's city of birth" the place it starts with
("born in Windhoek, South-West Africa"), "the county where X is" a name ending in "County"."""

from __future__ import annotations

import re

from investigation.memo import memoised
from investigation.text import TEXT_CACHE_SIZE, fold

# Kinds of place that contain the place a passage names first: the tail of "Town, Region" is one of them.
_CONTAINERS = frozenset(["state", "country", "nation", "province", "territory", "region", "continent"])
# Kinds of place named first in "Town, Region".
_SETTLEMENTS = frozenset(["city", "town", "village", "hometown", "birthplace"])
# Kinds of place whose names end in the kind ("McDowell County", "Gwanda District").
_SUFFIXED = frozenset(["county", "district", "parish", "prefecture", "municipality"])

_KINDS = "|".join(sorted(_CONTAINERS | _SETTLEMENTS | _SUFFIXED))
# "the state where …", "the country whose …", "the county in which …", "the city that …", "the country of …"
_DESCRIBED_PLACE = re.compile(
    rf"\bthe\s+({_KINDS})\s+(?:where|in\s+which|which|that|whose|of)\b", re.IGNORECASE
)
# "X's city of birth", "the birthplace of", "place of birth"
_BIRTH_PLACE = re.compile(
    r"\b(?:city|town|place)\s+of\s+birth\b|\bbirth\s*place\b|\bhometown\b", re.IGNORECASE
)
# A place written with what contains it, after a locative word: "in Kirkwood, Missouri", "near Middletown,
# Virginia", "in Beitbridge District and Gwanda District, Zimbabwe".
_CAP = r"[A-Z][\w.'’-]*"
_APPOSITION = re.compile(
    rf"\b(?:in|at|near|from|outside)\s+(?:the\s+)?({_CAP}(?:\s+(?:{_CAP}|and|of|de|la|upon))*?),\s+"
    rf"({_CAP}(?:[\s-]+{_CAP})*)"
)
# The rest of a list of names: more ", Name" items, then "and Name" / "or Name".
_ENUMERATION = re.compile(rf"(?:,\s+{_CAP}(?:[\s-]+{_CAP})*)*,?\s+(?:and|or)\s+[A-Z]")

# A name in the asked role ranks just above the passage's best other mention: first, without widening the gap
# that decides whether the planner also follows the runner-up.
_PROMOTION = 1.01


def asked_place(question: str) -> str:
    """The kind of place a chain question asks to resolve ("state", "city", "county"), or "" — for
    questions like "the waterfall in the country where the Bubye River is found"."""
    match = _DESCRIBED_PLACE.search(question)
    if match:
        return fold(match.group(1))
    return "city" if _BIRTH_PLACE.search(question) else ""


@memoised(TEXT_CACHE_SIZE // 4)
def _appositions(sentence: str) -> tuple[tuple[str, str], ...]:
    """(place, container) pairs of a sentence, folded: ("middletown", "virginia")."""
    out = []
    for match in _APPOSITION.finditer(sentence):
        if _ENUMERATION.match(sentence, match.end()):
            continue  # "in the Americas, Asia, Africa and Australia": a list of places, none inside another
        head = re.split(r"\s+and\s+", match.group(1))[-1]
        out.append((fold(head.rstrip(".")), fold(match.group(2).rstrip("."))))
    return tuple(out)


def in_asked_role(name: str, sentence: str, kind: str) -> bool:
    """`name` is, in `sentence`, the place of the asked `kind`: a container kind is the tail of a location
    apposition, a settlement its head, a suffixed kind a name ending in the kind's word."""
    if not kind:
        return False
    key = fold(name)
    if kind in _SUFFIXED:
        return key.endswith(" " + kind)
    pairs = _appositions(sentence)
    if kind in _CONTAINERS:
        return any(key == tail for _head, tail in pairs)
    return any(key == head for head, _tail in pairs)


def promote_places(
    found: dict[str, tuple[str, float]], in_role: set[str]
) -> dict[str, tuple[str, float]]:
    """Mentions (key → (name, salience)) with those in the asked place role (`in_role`) moved to the top:
    each weighs at least a little more than the best mention outside the role."""
    if not in_role:
        return found
    top = max((w for key, (_n, w) in found.items() if key not in in_role), default=0.0)
    return {
        key: (name, max(w, top * _PROMOTION) if key in in_role else w) for key, (name, w) in found.items()
    }
