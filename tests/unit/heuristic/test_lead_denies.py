"""A yes/no question answered No in its own words, however it is worded: the asked word negated leads
(`heuristic.lead.denies`), on made-up text."""

from __future__ import annotations

from cli.bench_metrics import first_sentence
from heuristic.chains import Sentence
from heuristic.lead import denies
from heuristic.pick_scoring import content_stems
from heuristic.synthesis import synthesize_answer
from investigation.state import Grade, Route, RouteDecision
from tests.unit.investigation.fakes import evidence


def test_a_yes_no_question_is_led_by_its_asked_word_negated() -> None:
    # "A shop opened last week. Is it eligible for a late-fee waiver?": the sentence holding the waiver's
    # words says who may grant one; the one saying "never eligible" answers.
    policy = evidence("waivers#0", "Runbook: late-fee waivers", (
        "Agents may grant one late-fee waiver per shop per year after checking the payment history. "
        "Shops younger than 60 days are never eligible."), grade=Grade.CORRECT, score=0.7)
    question = "A shop opened last week. Is it eligible for a late-fee waiver?"
    answer = synthesize_answer(question, RouteDecision(route=Route.LOOKUP, reason="t"), [policy])
    assert "never eligible" in first_sentence(answer.text)
    assert denies_text("Shops younger than 60 days are never eligible.", question)
    assert not denies_text("Agents do not need approval for a waiver.", "Is it eligible for a waiver?")


def denies_text(text: str, question: str) -> bool:
    return denies(Sentence(0, 0, text, frozenset(content_stems(text)), 1.0, 0.0), question)
