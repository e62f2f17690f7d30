"""What a reasoner reports about its provider calls (`Reasoner.take_usage`): one record per LLM call, per
fallback to the heuristic and per guard rejection. The steps add the tokens to the investigation's totals
and write each record to the trace as an event of its `kind` (`tasks/llm_usage.record_llm`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

UsageKind = Literal["llm_call", "llm_fallback", "llm_guard"]


class LLMUsage(BaseModel):
    """One record. A call carries its billed tokens (cache reads and writes are input tokens too), attempts
    and wait; a fallback or guard note has zero tokens and says why (`reason`, `detail`)."""

    model_config = ConfigDict(extra="forbid")

    kind: UsageKind = "llm_call"
    step: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    fallback: bool = False
    # a call
    attempts: int | None = None
    waited_s: float | None = None
    stop_reason: str | None = None
    repair: bool | None = None
    # a grading call
    missing_evidence: list[str] | None = None
    graded: int | None = None
    ungraded: int | None = None
    # a fallback or a guard rejection
    reason: str | None = None
    detail: str | None = None
    query: str | None = None
    unsupported: list[str] | None = None
    replacements: list[str] | None = None

    @property
    def input_total(self) -> int:
        """Every input token billed: plain, cache reads and cache writes."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def trace_data(self) -> dict[str, Any]:
        """The trace event's data: the fields the provider set (the same keys as the dicts of before),
        without `kind`, which is the event's kind."""
        return self.model_dump(mode="json", include=self.model_fields_set - {"kind"})
