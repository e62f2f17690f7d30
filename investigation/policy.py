"""Stop rules of the loop: after each hop, continue with named next queries or stop with a reason.

Each rule is checked in a fixed order, so the recorded reason is the most informative one that applies.
The rules read only typed signals (`Judgment`, `SubQuery.kind`, grades, budgets): no reasoner's language
rules steer another reasoner's run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from investigation.state import (
    Evidence,
    Grade,
    Judgment,
    LoopAction,
    LoopDecision,
    Mode,
    QueryKind,
    StopReason,
    SubQuery,
)
from investigation.text import words


@dataclass(frozen=True)
class BudgetSnapshot:
    """What the investigation has spent and may spend (read from Redis by the caller)."""

    hops_done: int
    max_hops: int
    retrieval_calls: int
    max_retrieval_calls: int
    llm_tokens: int
    max_llm_tokens: int
    seconds_left: float


def _stop(reason: StopReason, detail: str) -> LoopDecision:
    return LoopDecision(action=LoopAction.STOP, reason=reason, detail=detail)


def decide(
    *,
    question: str,
    mode: Mode,
    judgment: Judgment,
    budget: BudgetSnapshot,
    evidence: Sequence[Evidence],
    new_evidence: Sequence[Evidence],
    candidates: Sequence[SubQuery],
    engines: int,
    llm_tokens_per_hop: int = 0,
    max_queries_per_hop: int = 2,
) -> LoopDecision:
    """Decide after hop `budget.hops_done`. `candidates` are the next queries the reasoner proposes; a
    bridge that follows nothing the evidence introduced is not one (`follows_evidence`) and is dropped."""
    candidates = [c for c in candidates if follows_evidence(c, question, evidence)]
    if mode is Mode.SINGLE_SHOT:
        return _stop(StopReason.SINGLE_SHOT, "single-shot mode retrieves once")
    if judgment.sufficient:
        return _stop(
            StopReason.SUFFICIENT, f"evidence covers the question (confidence {judgment.confidence})"
        )
    relevant = [e for e in evidence if e.grade is not Grade.INCORRECT]
    if not relevant:
        return _stop(StopReason.UNANSWERABLE, "no retrieved passage agrees with the question")
    probing = any(c.kind is QueryKind.PROBE for c in candidates)
    if judgment.absent and not probing:
        return _stop(StopReason.UNANSWERABLE, "searched for and found nowhere in the knowledge base: "
                     + ", ".join(judgment.absent))
    if budget.seconds_left <= 0:
        return _stop(StopReason.DEADLINE, "the investigation's deadline has passed")
    if budget.hops_done >= budget.max_hops:
        return _stop(StopReason.HOP_CAP, f"{budget.hops_done} of {budget.max_hops} hops done")
    if budget.hops_done > 1 and not any(e.grade is not Grade.INCORRECT for e in new_evidence):
        return _stop(
            StopReason.NO_NEW_EVIDENCE, "the last hop found nothing new that agrees with the question"
        )
    if budget.hops_done > 1 and judgment.bridge_resolved is False and not probing:
        return _stop(StopReason.NO_NEW_EVIDENCE, "the last hop resolved no bridge entity: the chain stalled")
    if (judgment.max_useful_hops is not None and budget.hops_done >= judgment.max_useful_hops
            and not probing):
        return _stop(
            StopReason.NO_NEW_EVIDENCE, "the chain the question describes has been followed to its end"
        )
    if not candidates:
        return _stop(StopReason.NO_NEW_EVIDENCE, "nothing left to ask: no bridging query follows what the "
                     "evidence found")
    per_query = max(1, engines)
    affordable = (budget.max_retrieval_calls - budget.retrieval_calls) // per_query
    if affordable <= 0:
        return _stop(StopReason.RETRIEVAL_BUDGET,
                     f"{budget.retrieval_calls} of {budget.max_retrieval_calls} retrieval calls used")
    if budget.max_llm_tokens and budget.llm_tokens + llm_tokens_per_hop >= budget.max_llm_tokens:
        return _stop(
            StopReason.TOKEN_BUDGET, f"{budget.llm_tokens} of {budget.max_llm_tokens} LLM tokens used"
        )
    # Later hops follow one chain only: the first bridge is the best-supported one.
    chosen = tuple(candidates[: min(affordable, max_queries_per_hop if budget.hops_done == 1 else 1)])
    missing = "; ".join(judgment.missing_information) or "answer incomplete"
    return LoopDecision(action=LoopAction.CONTINUE, reason="insufficient", next_queries=chosen,
                        detail=f"missing: {missing}")


def follows_evidence(query: SubQuery, question: str, evidence: Sequence[Evidence]) -> bool:
    """True unless `query` is a bridge whose `follows` is empty, only the question's own words, or found in
    no clean evidence passage: a next hop is built from what the previous hop found, never from a bag of
    the question's words."""
    if query.kind is not QueryKind.BRIDGE:
        return True
    key = f" {' '.join(words(query.follows))} "
    if not key.strip() or key in f" {' '.join(words(question))} ":
        return False
    return any(key in f" {' '.join(words(f'{e.title}. {e.text}'))} " for e in evidence if not e.flagged)
