"""The orchestration-free steps of one investigation: start, reduce one hop, finish.

Celery tasks and the in-process executor call only these; they hold no I/O, so a redelivered task that
calls a step again with the same inputs gets the same outputs (evidence ids included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from investigation.answers import evidence_tokens, refusal, with_searched
from investigation.citations import validate
from investigation.fusion import RankedList, rrf
from investigation.guards import untrusted
from investigation.policy import BudgetSnapshot, decide
from investigation.ports import Reasoner
from investigation.state import (
    Answer,
    Evidence,
    Grade,
    Judgment,
    LoopAction,
    LoopDecision,
    Mode,
    Passage,
    Plan,
    QueryKind,
    RetrievalScope,
    Route,
    RouteDecision,
    Status,
    StopReason,
    SubQuery,
)
from investigation.text import query_key

__all__ = ["BudgetSnapshot", "FinalOutcome", "HopOutcome", "SlotResult", "StartOutcome", "finish",
           "reduce_hop", "start"]


@dataclass(frozen=True)
class SlotResult:
    """The hits of one sub-query on one engine (`error` set when that retrieval failed)."""

    query: str
    engine: str
    passages: list[Passage]
    error: str | None = None


@dataclass(frozen=True)
class StartOutcome:
    """Route and plan; `answer` is set only when no retrieval is needed (direct, or out of corpus)."""

    route: RouteDecision
    plan: Plan | None
    answer: Answer | None
    stop_reason: StopReason | None


@dataclass(frozen=True)
class HopOutcome:
    """One reduced hop: fused hits, newly graded evidence, chunks seen before, judgment and decision."""

    fused: list[Passage]
    new_evidence: list[Evidence]
    dedup_hits: list[str]
    judgment: Judgment
    decision: LoopDecision


@dataclass(frozen=True)
class FinalOutcome:
    """The ranked, compressed evidence handed to synthesis, the validated answer and the final status."""

    selected: list[Evidence]
    answer: Answer
    evidence_tokens: int
    status: Status


def start(reasoner: Reasoner, *, question: str, mode: Mode) -> StartOutcome:
    """Route the question, then plan hop 1 (which always includes the original question)."""
    route = reasoner.route(question)
    if route.route is Route.DIRECT:
        answer = reasoner.synthesize(question, route, [])
        return StartOutcome(route=route, plan=None, answer=answer, stop_reason=StopReason.DIRECT)
    if route.route is Route.OUT_OF_CORPUS:
        return StartOutcome(route=route, plan=None, answer=with_searched(refusal(route.reason), (), ()),
                            stop_reason=StopReason.UNANSWERABLE)
    original = SubQuery(text=question, purpose="original question", kind=QueryKind.ORIGINAL)
    if mode is Mode.SINGLE_SHOT:
        return StartOutcome(route=route, plan=Plan(original=question, subqueries=(original,)), answer=None,
                            stop_reason=None)
    plan = reasoner.plan(question, route)
    if all(query_key(s.text) != query_key(question) for s in plan.subqueries):
        plan = plan.model_copy(update={"subqueries": (original, *plan.subqueries)})
    if plan.original != question:
        plan = plan.model_copy(update={"original": question})
    return StartOutcome(route=route, plan=plan, answer=None, stop_reason=None)


def reduce_hop(
    reasoner: Reasoner,
    *,
    question: str,
    plan: Plan,
    hop: int,
    mode: Mode,
    results: Sequence[SlotResult],
    already_seen: set[str],
    evidence: Sequence[Evidence],
    asked: Sequence[str],
    budget: BudgetSnapshot,
    scope: RetrievalScope | None = None,
) -> HopOutcome:
    """Fuse → dedup against `already_seen` → grade new passages → judge all evidence → decide. Passages the
    `scope` does not admit are dropped before grading (the engines already filter; this is the backstop)."""
    if scope is not None:
        results = [
            SlotResult(r.query, r.engine, [p for p in r.passages if scope.admits(p.visibility)], r.error)
            for r in results
        ]
    ok = [r for r in results if r.error is None]
    fused = rrf([RankedList(query=r.query, passages=r.passages) for r in ok])
    fresh = [p for p in fused.passages if p.chunk_id not in already_seen]
    dedup_hits = [p.chunk_id for p in fused.passages if p.chunk_id in already_seen]
    new_evidence = [_inert(e) for e in reasoner.grade(question, fresh, hop, fused.query_of)] if fresh else []
    known = {e.chunk_id for e in evidence}
    new_evidence = [e for e in new_evidence if e.chunk_id not in known]
    everything = [*evidence, *new_evidence]
    judgment = reasoner.judge(question, plan, everything)
    candidates: list[SubQuery] = []
    if mode is Mode.AGENTIC and not judgment.sufficient and hop < budget.max_hops:
        asked_keys = {query_key(q) for q in asked}
        for sub in reasoner.next_queries(question, plan, everything, asked, judgment):
            key = query_key(sub.text)
            if key and key not in asked_keys:
                asked_keys.add(key)
                candidates.append(sub)
    engines = len({r.engine for r in results}) or 1
    if results and not ok and not evidence:
        failures = "; ".join(sorted({f"{r.engine}: {r.error}" for r in results}))
        decision = LoopDecision(
            action=LoopAction.STOP, reason=StopReason.ERROR, detail=f"every retrieval failed ({failures})"
        )
    else:
        decision = decide(question=question, mode=mode, judgment=judgment, budget=budget, evidence=everything,
                          new_evidence=new_evidence, candidates=candidates, engines=engines)
    return HopOutcome(fused=fused.passages, new_evidence=new_evidence, dedup_hits=dedup_hits,
                      judgment=judgment, decision=decision)


def _inert(evidence: Evidence) -> Evidence:
    """Untrusted text stays inert: flagged, graded incorrect and scored below any clean evidence, whatever
    the reasoner thought of it (it never grounds a query and is never handed to synthesis)."""
    if not untrusted(f"{evidence.title}\n{evidence.text}"):
        return evidence
    return evidence.model_copy(update={"flagged": True, "grade": Grade.INCORRECT,
                                       "score": round(min(evidence.score, 0.0) - 1.0, 6)})


def finish(reasoner: Reasoner, *, question: str, route: RouteDecision, evidence: Sequence[Evidence], k: int,
           token_budget: int, scope: RetrievalScope | None = None,
           searched: Sequence[str] = ()) -> FinalOutcome:
    """Rank and compress the evidence, synthesize a cited answer (or refuse), validate its citations.

    With a `scope`, evidence it does not admit never reaches the reasoner, and a sentence citing such
    evidence is removed (an answer left with nothing is a refusal). A refusal names the `searched` sub-queries
    and the nearest topics among the evidence the scope admits."""
    evidence = [e for e in evidence if not e.flagged and (scope is None or scope.admits(e.visibility))]
    selected = reasoner.select(question, evidence, k, token_budget)
    answer = validate(reasoner.synthesize(question, route, selected), selected, scope)
    if not answer.refused and not answer.text.strip():
        answer = refusal("no document this audience may read answers the question")
    answer = with_searched(answer, searched, evidence)
    status = Status.REFUSED if answer.refused else Status.ANSWERED
    return FinalOutcome(
        selected=selected, answer=answer, evidence_tokens=evidence_tokens(selected), status=status
    )
