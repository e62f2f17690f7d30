"""Value objects of an investigation: routes, passages, graded evidence, plans, judgments, answers."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Route(StrEnum):
    DIRECT = "direct"
    LOOKUP = "lookup"
    MULTI_PART = "multi_part"
    MULTI_HOP = "multi_hop"
    OUT_OF_CORPUS = "out_of_corpus"


class Mode(StrEnum):
    AGENTIC = "agentic"
    SINGLE_SHOT = "single-shot"


class Status(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    ANSWERED = "answered"
    REFUSED = "refused"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        return self in (Status.ANSWERED, Status.REFUSED, Status.FAILED)


class Grade(StrEnum):
    """CRAG bands, always judged against the ORIGINAL question."""

    CORRECT = "correct"
    AMBIGUOUS = "ambiguous"
    INCORRECT = "incorrect"


class StopReason(StrEnum):
    SUFFICIENT = "sufficient"
    HOP_CAP = "hop_cap"
    TOKEN_BUDGET = "token_budget"
    LLM_UNAVAILABLE = "llm_unavailable"
    RETRIEVAL_BUDGET = "retrieval_budget"
    NO_NEW_EVIDENCE = "no_new_evidence"
    DEADLINE = "deadline"
    UNANSWERABLE = "unanswerable"
    DIRECT = "direct"
    SINGLE_SHOT = "single_shot"
    ERROR = "error"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Chunk(Frozen):
    """A piece of a document as indexed. `source_id` is the document's id; `chunk_id` is unique per tenant."""

    chunk_id: str
    source_id: str
    title: str
    text: str
    url: str | None = None
    updated_at: str | None = None
    acl: tuple[str, ...] = ()
    position: int = 0


class Passage(Frozen):
    """One search hit from one engine."""

    chunk_id: str
    source_id: str
    title: str
    text: str
    score: float
    engine: str
    rank: int
    url: str | None = None


class Evidence(Frozen):
    """A fused, graded passage kept by the investigation. `id` is stable within the investigation."""

    id: str
    chunk_id: str
    source_id: str
    title: str
    text: str
    score: float
    grade: Grade
    hop: int
    query: str
    url: str | None = None


class RouteDecision(Frozen):
    route: Route
    reason: str
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class SubQuery(Frozen):
    text: str
    purpose: str = ""  # which part of the question it serves (e.g. "entity: Christopher Nolan")


class Plan(Frozen):
    """The original question is kept verbatim; rewrites/decomposition sit next to it."""

    original: str
    subqueries: tuple[SubQuery, ...]
    kind: str = "as_is"  # as_is | decomposed | rewritten | bridged


class Judgment(Frozen):
    """Typed sufficiency judgment of the evidence so far."""

    sufficient: bool
    answered_subqueries: tuple[str, ...] = ()
    missing_information: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)


class Citation(Frozen):
    marker: int
    evidence_id: str
    source_id: str
    title: str


class Answer(Frozen):
    text: str
    citations: tuple[Citation, ...] = ()
    refused: bool = False
    caveat: str | None = None


class Usage(Frozen):
    """LLM usage of one provider call (zero for the heuristic provider)."""

    input_tokens: int = 0
    output_tokens: int = 0
    model: str = "heuristic"


class LoopDecision(Frozen):
    """What the policy decided after a hop: continue with `next_queries`, or stop with `reason`."""

    action: str  # "continue" | "stop"
    reason: StopReason | str
    next_queries: tuple[SubQuery, ...] = ()
    detail: str = ""
