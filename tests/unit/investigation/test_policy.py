"""Every stop reason of the loop policy, and the continue decision with trimmed next queries."""

from __future__ import annotations

import pytest

from investigation.policy import BudgetSnapshot, decide
from investigation.state import Grade, Judgment, Mode, StopReason, SubQuery
from tests.unit.investigation.fakes import evidence

pytestmark = pytest.mark.unit

QUESTION = "What state did the director of Maximum Overdrive live in?"
RELEVANT = [evidence("mo#0", "Maximum Overdrive", "A film directed by Stephen King.")]
BRIDGED = [evidence("sk#0", "Stephen King", "He lives in Maine.", hop=2, query="Stephen King state live")]
INSUFFICIENT = Judgment(sufficient=False, missing_information=("bridge: unresolved",))
NEXT = [SubQuery(text="Stephen King state live"), SubQuery(text="Bangor state live")]


def budget(**overrides: float) -> BudgetSnapshot:
    values: dict[str, float] = {"hops_done": 1, "max_hops": 3, "retrieval_calls": 2, "max_retrieval_calls": 24,
                                "llm_tokens": 0, "max_llm_tokens": 60_000, "seconds_left": 100.0}
    values.update(overrides)
    return BudgetSnapshot(**values)  # type: ignore[arg-type]


def run(*, mode: Mode = Mode.AGENTIC, judgment: Judgment = INSUFFICIENT, b: BudgetSnapshot | None = None,
        ev: list = RELEVANT, new: list = RELEVANT, candidates: list = NEXT,  # type: ignore[type-arg]
        question: str = QUESTION):
    return decide(question=question, mode=mode, judgment=judgment, budget=b or budget(), evidence=ev,
                  new_evidence=new, candidates=candidates, engines=2)


def test_single_shot_always_stops_after_hop_one() -> None:
    assert run(mode=Mode.SINGLE_SHOT).reason is StopReason.SINGLE_SHOT


def test_sufficient_evidence_stops() -> None:
    assert run(judgment=Judgment(sufficient=True, confidence=0.9)).reason is StopReason.SUFFICIENT


def test_no_agreeing_evidence_is_unanswerable() -> None:
    irrelevant = [evidence("t#0", "Tea", "Tea.", grade=Grade.INCORRECT, score=0.1)]
    assert run(ev=irrelevant, new=irrelevant).reason is StopReason.UNANSWERABLE


def test_deadline_hop_cap_retrieval_and_token_budgets() -> None:
    assert run(b=budget(seconds_left=0)).reason is StopReason.DEADLINE
    assert run(b=budget(hops_done=3)).reason is StopReason.HOP_CAP
    assert run(b=budget(retrieval_calls=23)).reason is StopReason.RETRIEVAL_BUDGET
    assert run(b=budget(llm_tokens=60_000)).reason is StopReason.TOKEN_BUDGET


def test_no_new_evidence_and_nothing_left_to_ask() -> None:
    stale = [evidence("x#0", "X", "x", grade=Grade.INCORRECT, score=0.1, hop=2)]
    assert run(b=budget(hops_done=2), new=stale).reason is StopReason.NO_NEW_EVIDENCE
    assert run(b=budget(hops_done=2), new=RELEVANT).reason is StopReason.NO_NEW_EVIDENCE  # chain stalled
    assert run(candidates=[]).reason is StopReason.NO_NEW_EVIDENCE


def test_continue_names_what_is_missing_and_fits_the_budget() -> None:
    decision = run()
    assert decision.action == "continue" and list(decision.next_queries) == NEXT
    assert "bridge: unresolved" in decision.detail
    assert len(run(b=budget(retrieval_calls=21)).next_queries) == 1  # 3 calls left: one query × 2 engines
    nested = "In what state did the director of the film that Bangor's author wrote live?"
    later = run(b=budget(hops_done=2), new=BRIDGED, question=nested)
    assert later.action == "continue" and len(later.next_queries) == 1


def test_a_third_hop_only_for_questions_that_nest_two_descriptions() -> None:
    stop = run(b=budget(hops_done=2), new=BRIDGED)
    assert stop.reason is StopReason.NO_NEW_EVIDENCE and "chain is complete" in stop.detail
    probe = [SubQuery(text="Overdrive", purpose="probe: Overdrive")]
    assert run(b=budget(hops_done=2), new=BRIDGED, candidates=probe).action == "continue"


def test_names_found_nowhere_after_a_probe_make_the_question_unanswerable() -> None:
    absent = Judgment(sufficient=False, missing_information=("absent: Kubernetes",))
    assert run(judgment=absent, candidates=[SubQuery(text="Kubernetes", purpose="probe: Kubernetes")]).action \
        == "continue"
    stop = run(judgment=absent, b=budget(hops_done=2), candidates=[])
    assert stop.reason is StopReason.UNANSWERABLE and "Kubernetes" in stop.detail
