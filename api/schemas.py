"""Pydantic models at the HTTP boundary: what a client may send, and the shape of what it gets back.

Response models allow extra keys: the public JSON is built by `storage.repositories` (one place), and
these models document and type its core for OpenAPI without dropping anything it adds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, field_validator

from investigation.state import Mode


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WebhookCallback(_Strict):
    """Deliver the finished investigation by a signed POST to `url`."""

    type: Literal["webhook"]
    url: AnyHttpUrl


class BudgetOverride(_Strict):
    """Per-investigation limits; each may only lower (never raise) the tenant's and the server's limits."""

    max_hops: int | None = Field(default=None, ge=1, le=10)
    max_retrieval_calls: int | None = Field(default=None, ge=1, le=500)
    max_llm_tokens: int | None = Field(default=None, ge=0, le=10_000_000)
    deadline_seconds: int | None = Field(default=None, ge=5, le=3600)


class InvestigationCreate(_Strict):
    """The body of ``POST /v1/investigations``."""

    question: str = Field(min_length=1, description="The question or ticket text, kept verbatim.")
    callback: WebhookCallback | None = None
    mode: Literal["agentic", "single-shot"] = Mode.AGENTIC.value
    budget: BudgetOverride | None = None

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class CitationPublic(_Open):
    marker: int
    evidence_id: str
    source_id: str
    title: str


class EvidencePublic(_Open):
    id: str
    source_id: str
    title: str
    text: str
    score: float
    grade: str
    hop: int
    query: str


class InvestigationPublic(_Open):
    """THE public view of an investigation (also the webhook payload)."""

    id: str
    status: str
    route: str | None = None
    answer: str | None = None
    citations: list[CitationPublic] = []
    evidence: list[EvidencePublic] = []
    subqueries: list[Any] = []
    hops: int = 0
    retrieval_calls: int = 0
    stop_reason: str | None = None
    deliveries: list[Any] = []


class TraceEventPublic(_Open):
    id: int
    kind: str
    hop: int = 0
    data: dict[str, Any] = {}


class TracePublic(BaseModel):
    id: str
    events: list[TraceEventPublic]


class AttemptPublic(_Open):
    number: int
    status_code: int | None = None
    error: str | None = None
    duration_ms: float = 0.0


class DeliveryPublic(_Open):
    id: str
    investigation_id: str
    channel: str
    status: str
    attempts: int
    last_error: str | None = None


class DeliveryDetail(DeliveryPublic):
    attempt_log: list[AttemptPublic] = []


class DeliveryList(BaseModel):
    id: str
    deliveries: list[DeliveryPublic]


class ErrorItem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str = "value_error"


class ErrorBody(BaseModel):
    detail: list[ErrorItem] | str
