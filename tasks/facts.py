"""What the steps read of an investigation and its hops: the columns they use, from a row or as a step of
this process wrote them (`tasks.relay.Known`); and the budget intake stored."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from bootstrap import Services
from investigation.state import Evidence, Grade, Mode, Visibility
from storage import repositories as repo
from storage.models import Hop, Investigation


@dataclass(frozen=True, slots=True)
class Facts:
    """The columns of an investigation the steps read after the intake, as its row has them (`of`), or as the
    step before, in this process, wrote them (`tasks.relay.Known`)."""

    id: str
    tenant_id: str
    question: str
    mode: str
    audience: str
    principals: list[str]
    plan: dict[str, Any] | None
    subqueries: list[str]
    route: str | None
    route_reason: str | None

    @classmethod
    def of(cls, inv: Investigation) -> Facts:
        return cls(
            id=inv.id,
            tenant_id=inv.tenant_id,
            question=inv.question,
            mode=inv.mode,
            audience=inv.audience,
            principals=list(inv.principals or ()),
            plan=inv.plan,
            subqueries=list(inv.subqueries),
            route=inv.route,
            route_reason=inv.route_reason,
        )


@dataclass(frozen=True, slots=True)
class HopFacts:
    """The columns of a hop the steps read (its state and decision as the step before left them)."""

    number: int
    queries: list[dict[str, Any]]
    engines: list[str]
    tools: list[dict[str, Any]]
    decision: dict[str, Any] | None = None

    @classmethod
    def of(cls, hop: Hop) -> HopFacts:
        return cls(number=hop.number, queries=list(hop.queries), engines=list(hop.engines),
                   tools=list(hop.tools or []), decision=hop.decision)

    @classmethod
    def saved(cls, hop: Hop) -> HopFacts:
        """A hop as a read of its row gives it back: its JSON columns through JSON (a query's kind, an enum
        member when the hop was built, reads back as its value)."""
        return cls(hop.number, *as_read([hop.queries, hop.engines, hop.tools or [], hop.decision]))



def as_read(value: Any) -> Any:
    """`value` as a JSON column gives it back once written."""
    return json.loads(json.dumps(value))


def evidence_of(records: list[Any]) -> list[Evidence]:
    """Evidence rows (`repo.list_evidence`) as the domain's evidence, in their order."""
    return [Evidence(id=r.evidence_id, chunk_id=r.chunk_id, source_id=r.source_id, title=r.title,
                     text=r.text, score=r.score, grade=Grade(r.grade), hop=r.hop, query=r.query, url=r.url,
                     visibility=Visibility(r.visibility), flagged=r.flagged)
            for r in records]


def limits(services: Services, inv: Investigation) -> dict[str, int]:
    """The investigation's budget as intake stored it (`app.intake.effective_budget`); rows written
    before budgets were stored whole fall back to the server defaults for a missing limit."""
    s = services.settings
    limits = {"max_hops": s.limits.max_hops, "max_retrieval_calls": s.limits.max_retrieval_calls,
              "max_llm_tokens": s.limits.max_llm_tokens, "deadline_seconds": s.limits.deadline_seconds}
    limits.update({k: int(v) for k, v in (inv.budget or {}).items() if k in limits and v is not None})
    if inv.mode == Mode.SINGLE_SHOT.value:
        limits["max_hops"] = 1  # what single-shot means, whatever a budget says
    return limits


def deadline_ts(inv: Investigation) -> float:
    """The investigation's deadline as a Unix timestamp (the budget in Redis counts against it)."""
    return inv.deadline_at.replace(tzinfo=UTC).timestamp()


def tenant_of(services: Services, inv_id: str) -> str:
    """The investigation's tenant (the storage's bounded per-process lookup: one query per investigation)."""
    with services.session() as session:
        return repo.investigation_tenant(session, investigation_id=inv_id)
