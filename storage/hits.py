"""What a hop's retrieval and tool tasks park in Redis for the hop's reducer (`RedisState.store_hits`), one
hash field per chord slot: validated when it is written and when it is read back, stored as the same JSON
the tasks wrote as plain dicts before (only the fields a task set; passages in full)."""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

from investigation.state import Passage


class SlotHits(BaseModel):
    """One slot's result: the query it ran, its engine (or `tool:<name>`), the passages found, and why it
    found none (`error`: deadline, retrieval_budget, an engine's or tool's failure) — or a tool finding's
    knowledge-base look-up (query = the finding, no timing)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str
    engine: str
    passages: tuple[Passage, ...] = Field(default=())
    error: str | None = None
    cached: bool = False
    ms: float = 0.0
    tool: str | None = None

    def to_json(self) -> str:
        """The stored form: the fields the task set, as JSON (`stored_form`)."""
        return self.stored_form()[0]

    def stored_form(self) -> tuple[str, bool]:
        """The stored form, and whether it reads back as this very object (`from_json`).

        Written by pydantic's own serializer (a third of the time of a dict dumped by `json`; non-ASCII
        characters as themselves rather than escaped, the same values either way). That serializer writes
        a NaN or an infinity as null and cannot encode a lone surrogate: such a result is dumped by `json`
        as before, which writes NaN/Infinity (read back as themselves) and escapes a lone surrogate (which
        the reader refuses, as it always did: the slot reads as a missing result, hence False)."""
        include = set(self.model_fields_set)
        exact = True
        if math.isfinite(self.ms) and all(math.isfinite(p.score) for p in self.passages):
            try:
                return self.__pydantic_serializer__.to_json(self, include=include).decode(), True
            except PydanticSerializationError:  # a lone surrogate in a text
                exact = False
        return json.dumps(self.model_dump(mode="json", include=include)), exact

    @classmethod
    def from_json(cls, raw: str | bytes) -> SlotHits:
        """Raises pydantic's ValidationError (or ValueError for malformed JSON) when `raw` is not a slot."""
        return cls.model_validate_json(raw)


class Written:
    """What this process parked last, as written (a bounded memory, oldest forgotten first): a reducer in the
    process that ran the hop's searches (the inline executor, a worker that ran both) gets back the result
    it wrote instead of parsing it again, when what Redis returns is byte for byte what was written (so
    it is what the parse would give: `SlotHits.to_json` reads back as the same object). Anything else —
    another process's result, one overwritten since, one forgotten — is parsed as before."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str], tuple[bytes, SlotHits]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, key: str, slot: str, raw: bytes, hits: SlotHits) -> None:
        with self._lock:
            self._items[(key, slot)] = (raw, hits)
            self._items.move_to_end((key, slot))
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def recall(self, key: str, slot: str, raw: str | bytes) -> SlotHits | None:
        """The result written as `raw` under (key, slot), once (then forgotten); None if not this one."""
        with self._lock:
            found = self._items.pop((key, slot), None)
        if found is None:
            return None
        written, hits = found
        return hits if written == (raw.encode() if isinstance(raw, str) else raw) else None
