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


# The reasons an investigation goes on without the LLM (to the heuristic fallback) or stops for it.
LLM_STOPS = frozenset({StopReason.TOKEN_BUDGET, StopReason.LLM_UNAVAILABLE})


class PlanKind(StrEnum):
    """How a plan relates to the question: searched as written, split into parts, rewritten, or bridged."""

    AS_IS = "as_is"
    DECOMPOSED = "decomposed"
    REWRITTEN = "rewritten"
    BRIDGED = "bridged"


class QueryKind(StrEnum):
    """What a sub-query is for; the stop policy reads this, never the free-text `purpose`."""

    ORIGINAL = "original"  # the question as asked
    PART = "part"  # one independent part or compared entity of a decomposed question
    BRIDGE = "bridge"  # follows an entity/term a previous hop found
    PROBE = "probe"  # looks once more for names of the question no evidence mentions yet
    ENTITIES = "entities"  # names the graded evidence mentions, searched by the `entities` engine only
    OTHER = "other"  # anything else a reasoner proposes


class LoopAction(StrEnum):
    CONTINUE = "continue"
    STOP = "stop"


class HopState(StrEnum):
    """A hop row's lifecycle: its queries are planned, then its results are reduced (decision recorded)."""

    PLANNED = "planned"
    REDUCED = "reduced"


class Visibility(StrEnum):
    """Who a document is written for: anyone (`public`), or the support team only (`internal`)."""

    PUBLIC = "public"
    INTERNAL = "internal"


class Audience(StrEnum):
    """Who reads the answer: a support agent (may see internal documents) or the customer (never)."""

    AGENT = "agent"
    CUSTOMER = "customer"


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
    visibility: Visibility = Visibility.PUBLIC


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
    visibility: Visibility = Visibility.PUBLIC


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
    visibility: Visibility = Visibility.PUBLIC
    flagged: bool = False  # the passage addresses an AI or imitates markup: ranked down, never quoted


class RouteDecision(Frozen):
    route: Route
    reason: str
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class SubQuery(Frozen):
    text: str
    purpose: str = ""  # which part of the question it serves, for people (e.g. "entity: Christopher Nolan")
    kind: QueryKind = QueryKind.OTHER
    # For a BRIDGE: the entity, term or state an earlier hop's passage introduced that this query follows
    # ("read-only", "Unified Auth Service"), copied from that passage. The stop policy reads it.
    follows: str = ""


class Plan(Frozen):
    """The original question is kept verbatim; rewrites/decomposition sit next to it."""

    original: str
    subqueries: tuple[SubQuery, ...]
    kind: PlanKind = PlanKind.AS_IS


class Judgment(Frozen):
    """Typed sufficiency judgment of the evidence so far.

    The signals the stop policy reads are typed fields any reasoner fills: `absent` (names of the question
    that no evidence mentions and that decide it), `bridge_resolved` (the latest hop's evidence is about
    the entity a bridging query asked for; None = not assessed) and `max_useful_hops` (hops beyond which
    the reasoner expects nothing more; None = no estimate). `missing_information` is for people and prompts.
    """

    sufficient: bool
    answered_subqueries: tuple[str, ...] = ()
    missing_information: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    absent: tuple[str, ...] = ()
    bridge_resolved: bool | None = None
    max_useful_hops: int | None = Field(default=None, ge=1)


class Citation(Frozen):
    marker: int
    evidence_id: str
    source_id: str
    title: str
    internal: bool = False  # cites an internal document: fine for an agent, never shown to a customer


class Answer(Frozen):
    text: str
    citations: tuple[Citation, ...] = ()
    refused: bool = False
    caveat: str | None = None




class LoopDecision(Frozen):
    """What the policy decided after a hop: continue with `next_queries`, or stop with `reason`."""

    action: LoopAction
    reason: StopReason | str
    next_queries: tuple[SubQuery, ...] = ()
    detail: str = ""


class RetrievalScope(Frozen):
    """What one investigation may retrieve, enforced inside every engine (before grading, so no provider
    ever sees the rest): `acl` principals (None = no ACL restriction) and the allowed `visibility` values
    (None = all)."""

    acl: tuple[str, ...] | None = None
    visibility: tuple[Visibility, ...] | None = None

    @classmethod
    def of(cls, audience: str, principals: tuple[str, ...] | list[str] = ()) -> RetrievalScope:
        """A customer sees public documents whose ACL admits one of `principals` (none: ACL-free ones only);
        an agent sees everything, restricted to `principals` when given."""
        principals = tuple(dict.fromkeys(principals))
        if Audience(audience) is Audience.CUSTOMER:
            return cls(acl=principals, visibility=(Visibility.PUBLIC,))
        return cls(acl=principals or None, visibility=None)

    def admits(self, visibility: Visibility) -> bool:
        return self.visibility is None or visibility in self.visibility

    def cache_terms(self) -> list[str] | None:
        """The scope as cache-key material: distinct scopes never share cached hits."""
        if self.acl is None and self.visibility is None:
            return None
        terms = ["scope"] + [f"acl:{p}" for p in self.acl or ()] + (["acl:*"] if self.acl is None else [])
        return terms + [f"visibility:{v.value}" for v in self.visibility or ()]
