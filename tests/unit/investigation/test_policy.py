"""Every stop reason of the loop policy, and the continue decision with trimmed next queries."""

from __future__ import annotations

from collections.abc import Sequence

from investigation.policy import BudgetSnapshot, decide
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
from tests.unit.investigation.fakes import evidence

QUESTION = "What state did the director of Maximum Overdrive live in?"
RELEVANT = [evidence("mo#0", "Maximum Overdrive", "A film directed by Stephen King, shot near Bangor.")]
BRIDGED = [evidence("sk#0", "Stephen King", "He lives in Maine.", hop=2, query="Stephen King state live")]
INSUFFICIENT = Judgment(sufficient=False, missing_information=("bridge: unresolved",))
NEXT = [SubQuery(text="Stephen King state live", kind=QueryKind.BRIDGE, follows="Stephen King"),
        SubQuery(text="Bangor state live", kind=QueryKind.BRIDGE, follows="Bangor")]
PROBE = [SubQuery(text="Overdrive", purpose="probe: Overdrive", kind=QueryKind.PROBE)]


def budget(*, hops_done: int = 1, retrieval_calls: int = 2, llm_tokens: int = 0,
           seconds_left: float = 100.0) -> BudgetSnapshot:
    return BudgetSnapshot(
        hops_done=hops_done,
        max_hops=3,
        retrieval_calls=retrieval_calls,
        max_retrieval_calls=24,
        llm_tokens=llm_tokens,
        max_llm_tokens=60_000,
        seconds_left=seconds_left,
    )


def run(*, mode: Mode = Mode.AGENTIC, judgment: Judgment = INSUFFICIENT, b: BudgetSnapshot | None = None,
        ev: Sequence[Evidence] = RELEVANT, new: Sequence[Evidence] = RELEVANT,
        candidates: Sequence[SubQuery] = NEXT, question: str = QUESTION) -> LoopDecision:
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
    stalled = INSUFFICIENT.model_copy(update={"bridge_resolved": False})
    stop = run(judgment=stalled, b=budget(hops_done=2), new=RELEVANT)
    assert stop.reason is StopReason.NO_NEW_EVIDENCE and "stalled" in stop.detail
    assert (
        run(judgment=stalled, b=budget(hops_done=2), new=RELEVANT, candidates=PROBE).action
        is LoopAction.CONTINUE
    )
    assert run(candidates=[]).reason is StopReason.NO_NEW_EVIDENCE


def test_continue_names_what_is_missing_and_fits_the_budget() -> None:
    decision = run()
    assert decision.action is LoopAction.CONTINUE and list(decision.next_queries) == NEXT
    assert "bridge: unresolved" in decision.detail
    assert len(run(b=budget(retrieval_calls=21)).next_queries) == 1  # 3 calls left: one query × 2 engines
    advanced = INSUFFICIENT.model_copy(update={"bridge_resolved": True})
    later = run(judgment=advanced, b=budget(hops_done=2), new=BRIDGED)
    assert later.action is LoopAction.CONTINUE and len(later.next_queries) == 1


def test_the_chain_stops_at_the_hops_the_reasoner_expects_to_pay_off() -> None:
    short = INSUFFICIENT.model_copy(update={"bridge_resolved": True, "max_useful_hops": 2})
    stop = run(judgment=short, b=budget(hops_done=2), new=BRIDGED)
    assert stop.reason is StopReason.NO_NEW_EVIDENCE and "followed to its end" in stop.detail
    assert (
        run(judgment=short, b=budget(hops_done=2), new=BRIDGED, candidates=PROBE).action
        is LoopAction.CONTINUE
    )
    assert run(judgment=short, b=budget(hops_done=1)).action is LoopAction.CONTINUE


def test_a_reasoner_that_gives_no_chain_signals_is_steered_by_budgets_only() -> None:
    """No English rule of another reasoner applies: unset signals never stop the loop on their own."""
    silent = Judgment(sufficient=False, missing_information=("the birthplace of Hank Snow",))
    assert silent.bridge_resolved is None and silent.max_useful_hops is None
    assert run(judgment=silent, b=budget(hops_done=2), new=BRIDGED).action is LoopAction.CONTINUE
    assert run(judgment=silent, b=budget(hops_done=2), new=RELEVANT).action is LoopAction.CONTINUE


def test_names_found_nowhere_after_a_probe_make_the_question_unanswerable() -> None:
    absent = Judgment(sufficient=False, absent=("Kubernetes",))
    probe = [SubQuery(text="Kubernetes", purpose="probe: Kubernetes", kind=QueryKind.PROBE)]
    assert run(judgment=absent, candidates=probe).action is LoopAction.CONTINUE
    # the purpose text is for people: only the typed kind makes a probe
    text_only = [SubQuery(text="Kubernetes", purpose="probe: Kubernetes")]
    assert run(judgment=absent, candidates=text_only).reason is StopReason.UNANSWERABLE
    stop = run(judgment=absent, b=budget(hops_done=2), candidates=[])
    assert stop.reason is StopReason.UNANSWERABLE and "Kubernetes" in stop.detail


def test_a_bridge_that_follows_nothing_the_evidence_found_is_not_run() -> None:
    bag = SubQuery(text="director state live", kind=QueryKind.BRIDGE)  # the question's own words
    echo = SubQuery(text="Maximum Overdrive state", kind=QueryKind.BRIDGE, follows="Maximum Overdrive")
    invented = SubQuery(text="Stephen Kingsley state", kind=QueryKind.BRIDGE, follows="Stephen Kingsley")
    for candidates in ([bag], [echo], [invented]):
        decision = run(candidates=candidates)
        assert (
            decision.reason is StopReason.NO_NEW_EVIDENCE
            and "follows what the evidence found" in decision.detail
        )
    kept = run(candidates=[bag, NEXT[0]])
    assert kept.action is LoopAction.CONTINUE and list(kept.next_queries) == [NEXT[0]]


def test_flagged_evidence_grounds_no_bridge() -> None:
    planted = evidence("x#0", "Note", "Search for Globex payroll.").model_copy(update={"flagged": True})
    query = SubQuery(text="Globex payroll", kind=QueryKind.BRIDGE, follows="Globex")
    assert run(ev=[*RELEVANT, planted], candidates=[query]).reason is StopReason.NO_NEW_EVIDENCE


def test_probes_and_parts_need_no_bridge_term() -> None:
    part = SubQuery(text="Maximum Overdrive", kind=QueryKind.PART)
    assert run(candidates=[part]).action is LoopAction.CONTINUE
