"""The ports: small Protocols every backend and provider implements. Adapters live in `adapters/`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from investigation.state import (
    Answer,
    Chunk,
    Evidence,
    Judgment,
    Passage,
    Plan,
    RouteDecision,
    SubQuery,
    Visibility,
)
from investigation.usage import LLMUsage


@runtime_checkable
class SearchBackend(Protocol):
    """A lexical or vector engine. Tenant, ACL and visibility filtering is enforced INSIDE the backend.

    `search` raises `ValidationFailed("query", ...)` on an empty/whitespace query. `acl=None` means
    no ACL restriction; otherwise a chunk is visible when it has no acl or shares a principal with `acl`.
    `visibility=None` means every visibility; otherwise only chunks whose visibility is listed (a customer
    audience passes `(Visibility.PUBLIC,)`). Passages carry their chunk's visibility.
    """

    name: str  # "bm25", "vector", "elasticsearch", "weaviate"

    def upsert(self, tenant: str, chunks: Sequence[Chunk]) -> int: ...

    def delete(self, tenant: str, source_ids: Sequence[str]) -> int: ...

    def search(
        self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
        visibility: Sequence[Visibility] | None = None,
    ) -> list[Passage]: ...

    def count(self, tenant: str) -> int: ...

    def ping(self) -> bool: ...


@runtime_checkable
class TenantErasable(Protocol):
    """An engine that can remove every entry of one tenant (tenant removal), returning how many it removed."""

    def delete_tenant(self, tenant: str) -> int: ...


class Embedder(Protocol):
    """Text → unit-norm vectors (list of floats per text)."""

    dim: int
    model_id: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class TokenBudget(Protocol):
    """The LLM token budget of one investigation and its tenant: checked before a call, charged after."""

    def check(self, estimate: int) -> None:
        """Raise BudgetExceeded when a call of about `estimate` input tokens may not start."""

    def charge(self, tokens: int) -> None:
        """Charge tokens a call used (always succeeds: they are spent)."""

    def stopped(self) -> tuple[str, str] | None:
        """(reason, detail) once the LLM is out for this investigation, else None."""

    def stop(self, reason: str, detail: str) -> None:
        """Remember that the LLM is out for this investigation (the first reason wins)."""


ProgressEvents = Callable[[dict[str, Any]], None]


class Reasoner(Protocol):
    """The decision maker of the loop (heuristic or an LLM). Every method judges against the ORIGINAL
    question and returns typed values; an LLM implementation validates its JSON and falls back safely."""

    name: str

    def route(self, question: str) -> RouteDecision: ...

    def plan(self, question: str, route: RouteDecision) -> Plan: ...

    def grade(
        self, question: str, passages: Sequence[Passage], hop: int, query_of: dict[str, str]
    ) -> list[Evidence]:
        """Grade fused passages (best first). `query_of[chunk_id]` is the sub-query that found it."""
        ...

    def judge(self, question: str, plan: Plan, evidence: Sequence[Evidence]) -> Judgment: ...

    def next_queries(
        self,
        question: str,
        plan: Plan,
        evidence: Sequence[Evidence],
        asked: Sequence[str],
        judgment: Judgment,
    ) -> list[SubQuery]:
        """Queries for the next hop, from `judgment` (this hop's, by `judge`) and the evidence; never repeats
        anything in `asked`. Each carries its `kind` (bridge, probe, part...) for the stop policy."""
        ...

    def select(
        self, question: str, evidence: Sequence[Evidence], k: int, token_budget: int
    ) -> list[Evidence]:
        """Final ranking/compression of the evidence handed to synthesis (best first)."""
        ...

    def synthesize(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> Answer: ...

    def take_usage(self) -> list[LLMUsage]:
        """Usage of every provider call (and every fallback or guard rejection) since the last
        `take_usage`, oldest first, then forgotten. The heuristic provider returns []."""
        ...

    def bind(self, *, budget: TokenBudget, on_event: ProgressEvents | None = None) -> Reasoner:
        """This reasoner for one investigation: calls charged to `budget`, progress sent to `on_event`.
        A provider that makes no LLM calls returns itself."""
        ...


@runtime_checkable
class ReadsAhead(Protocol):
    """A reasoner that can read a found passage before it is asked about it: what it computes of the passage
    alone is then ready when the passage is graded, judged and quoted. Reading ahead changes no answer."""

    def read_ahead(self, passage: Passage) -> None: ...


@dataclass(frozen=True)
class Delivered:
    """What one successful send reports: the receiver's status, a line for the attempt log, and (helpdesks
    say it) how many requests the channel's rate limit has left of how many."""

    status_code: int
    detail: str | None = None
    rate_limit_remaining: int | None = None
    rate_limit: int | None = None


class Deliverer(Protocol):
    """One delivery channel (webhook, email, zendesk, freshdesk). Raises TransientError to be retried."""

    channel: str

    def deliver(self, *, delivery_id: str, target: dict[str, object], payload: dict[str, object],
                secret: str, resume: bool = False) -> Delivered:
        """Send once. A receiver's refusal raises ReceiverRejected, a failure worth retrying
        ReceiverUnavailable (`uncertain` when the send may have happened); other TransientError /
        PermanentError for the rest. `resume`: an earlier attempt's outcome is unknown, so a receiver
        without idempotency keys is checked before sending again."""
        ...

    def close(self) -> None:
        """Release its connections (the deliver step builds one per attempt and closes it after)."""
        ...
