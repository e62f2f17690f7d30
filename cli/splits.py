"""The frozen dev/test split of every labelled set: a question's half is a function of its id alone.

`dev` is where rules are developed; `test` is run to report, never to tune. The half comes from
sha256 of the question id, so adding, removing or reordering questions never moves another question
from one half to the other, and nothing here is ever re-drawn. A row without an `id` gets one derived
from its question and its context (the same question asked by two requesters is two cases).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar

from investigation.errors import ValidationFailed

Split = Literal["dev", "test"]
SPLITS: tuple[Split, ...] = ("dev", "test")

Row = TypeVar("Row", bound=Mapping[str, Any])


def stable_id(row: Mapping[str, Any]) -> str:
    """The row's `id`, else `q-` + the first 12 hex of sha256 over its question and context."""
    given = row.get("id")
    if given:
        return str(given)
    key = json.dumps({"question": row.get("question"), "context": row.get("context")}, sort_keys=True)
    return "q-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def split_of(question_id: str) -> Split:
    """`dev` when sha256(id)'s first byte is even, else `test`: half of the ids on average."""
    return "dev" if hashlib.sha256(question_id.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def check_split(name: str | None) -> Split | None:
    """None (every question) or a valid half; anything else is a clear error naming the option."""
    if name is None or name in SPLITS:
        return name
    raise ValidationFailed("split", f"must be one of {', '.join(SPLITS)} (got {name!r})")


def select(rows: Iterable[Row], split: str | None) -> list[Row]:
    """The rows of one half (all rows when split is None), in their original order."""
    half = check_split(split)
    return [r for r in rows if half is None or split_of(stable_id(r)) == half]
