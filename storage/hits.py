"""What a hop's retrieval and tool tasks park in Redis for the hop's reducer (`RedisState.store_hits`), one
hash field per chord slot: validated when it is written and when it is read back, stored as the same JSON
the tasks wrote as plain dicts before (only the fields a task set; passages in full)."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

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
        """The stored form: the fields the task set, in the JSON encoding the reducer has always read."""
        return json.dumps(self.model_dump(mode="json", include=set(self.model_fields_set)))

    @classmethod
    def from_json(cls, raw: str | bytes) -> SlotHits:
        """Raises pydantic's ValidationError (or ValueError for malformed JSON) when `raw` is not a slot."""
        return cls.model_validate_json(raw)
