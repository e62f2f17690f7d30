"""THE public shape of an investigation (HTTP API, webhook payload, `sleuth ask --json`) and of a trace
event: typed models built from rows here, in one place. The models forbid unknown keys, so a field added
to the JSON is added to its model (and so to OpenAPI) or it fails loudly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Table, bindparam
from sqlmodel import Session, select

from storage._common import iso
from storage._deliveries import list_deliveries
from storage._prepared import Prepared, load, one_of
from storage._records import list_evidence
from storage.models import Delivery, EvidenceRecord, Investigation, TraceEvent

_CITATION_KEYS = ("marker", "evidence_id", "source_id", "title")


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CitationPublic(_Public):
    """A numbered citation: marker [n] in the answer → the evidence it came from."""

    marker: int
    evidence_id: str
    source_id: str
    title: str
    internal: bool = False  # the source is an internal document (agent audience only)


class EvidencePublic(_Public):
    id: str
    source_id: str
    title: str
    text: str
    score: float
    grade: str
    hop: int
    query: str


class LlmStepUsage(_Public):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    models: list[str] = []
    fallbacks: int = 0


class LlmUsagePublic(_Public):
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    by_step: dict[str, LlmStepUsage] = {}


class DeliverySummary(_Public):
    id: str
    channel: str
    status: str
    attempts: int


class InvestigationPublic(_Public):
    """THE public view of an investigation (HTTP, webhook payload, `--json`)."""

    id: str
    status: str
    mode: str
    audience: str = "agent"
    question: str
    route: str | None = None
    answer: str | None = None
    caveat: str | None = None
    citations: list[CitationPublic] = []
    evidence: list[EvidencePublic] = []
    subqueries: list[str] = []
    hops: int = 0
    retrieval_calls: int = 0
    evidence_tokens: int = 0
    llm: LlmUsagePublic = LlmUsagePublic()
    stop_reason: str | None = None
    error: str | None = None
    created_at: str | None = None
    finished_at: str | None = None
    deliveries: list[DeliverySummary] = []


def investigation_view(session: Session, *, investigation: Investigation) -> dict[str, Any]:
    """The investigation as the outside world sees it: `InvestigationPublic` as JSON-ready data."""
    evidence = list_evidence(session, investigation_id=investigation.id)
    deliveries = list_deliveries(session, investigation_id=investigation.id)
    calls = load(session, TraceEvent, _LLM_EVENTS_OF, {"investigation_id": investigation.id}, attach=False)
    return build_investigation_view(investigation, evidence, deliveries, llm_events=calls).model_dump(
        mode="json"
    )


LLM_EVENT_KINDS = ("llm_call", "llm_fallback")
_EVENTS: Table = TraceEvent.__table__  # type: ignore[attr-defined]  # SQLModel sets __table__, undeclared
# Read on every poll of an investigation.
_LLM_EVENTS_OF = Prepared(select(*_EVENTS.c).where(
    _EVENTS.c.investigation_id == bindparam("investigation_id"),
    one_of(_EVENTS.c.kind, LLM_EVENT_KINDS)).order_by(_EVENTS.c.id))
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def llm_usage_view(inv: Investigation, events: Sequence[TraceEvent]) -> dict[str, Any]:
    """Totals and per-step LLM usage (calls, tokens, cache reads/writes, models, fallbacks) from the trace."""
    by_step: dict[str, dict[str, Any]] = {}
    for event in events:
        data = event.data or {}
        step = by_step.setdefault(str(data.get("step", "?")), {
            "calls": 0, **{key: 0 for key in _USAGE_KEYS}, "models": [], "fallbacks": 0})
        if event.kind == "llm_call":
            step["calls"] += 1
            for key in _USAGE_KEYS:
                step[key] += int(data.get(key) or 0)
            if data.get("model") and data["model"] not in step["models"]:
                step["models"].append(data["model"])
        else:
            step["fallbacks"] += 1
    return {"input_tokens": inv.llm_input_tokens, "output_tokens": inv.llm_output_tokens,
            "calls": sum(s["calls"] for s in by_step.values()), "by_step": by_step}


def build_investigation_view(
    inv: Investigation, evidence: Sequence[EvidenceRecord], deliveries: Sequence[Delivery],
    llm_events: Sequence[TraceEvent] = (),
) -> InvestigationPublic:
    """`investigation_view` from rows already loaded (pure)."""
    return InvestigationPublic.model_validate(
        {
            "id": inv.id,
            "status": inv.status,
            "mode": inv.mode,
            "audience": inv.audience,
            "question": inv.question,
            "route": inv.route,
            "answer": inv.answer,
            "caveat": inv.caveat,
            "citations": [
                {
                    **{key: c.get(key) for key in _CITATION_KEYS},
                    **({"internal": True} if c.get("internal") else {}),
                }
                for c in inv.citations or []
            ],
            "evidence": [_evidence_view(e) for e in order_evidence(evidence, inv.final_evidence_ids or [])],
            "subqueries": list(inv.subqueries or []),
            "hops": inv.hops,
            "retrieval_calls": inv.retrieval_calls,
            "evidence_tokens": inv.evidence_tokens,
            "llm": llm_usage_view(inv, llm_events),
            "stop_reason": inv.stop_reason,
            "error": inv.error,
            "created_at": iso(inv.created_at),
            "finished_at": iso(inv.finished_at),
            "deliveries": [
                {"id": d.id, "channel": d.channel, "status": d.status, "attempts": d.attempts}
                for d in deliveries
            ],
        }
    )


def order_evidence(evidence: Sequence[EvidenceRecord], final_ids: Sequence[str]) -> list[EvidenceRecord]:
    """The final evidence first, in `final_ids` order, then the rest in their given order."""
    by_id = {e.evidence_id: e for e in evidence}
    first = [by_id[i] for i in dict.fromkeys(final_ids) if i in by_id]
    chosen = {e.evidence_id for e in first}
    return first + [e for e in evidence if e.evidence_id not in chosen]


def _evidence_view(e: EvidenceRecord) -> dict[str, Any]:
    return {
        "id": e.evidence_id,
        "source_id": e.source_id,
        "title": e.title,
        "text": e.text,
        "score": e.score,
        "grade": e.grade,
        "hop": e.hop,
        "query": e.query,
    }


def event_view(event: TraceEvent) -> dict[str, Any]:
    return {"id": event.id, "kind": event.kind, "hop": event.hop, "at": iso(event.at), "data": event.data}
