"""A yes/no question answered No in its own words ("Is X included on Y?" → "X is not included on Y"): the
negated sentence is the answer, not a restatement of the question. Made-up text."""

from __future__ import annotations

from heuristic.synthesis import synthesize_answer
from heuristic.verdicts import answers_no
from investigation.state import Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")


def test_a_negated_restatement_answers_a_yes_no_question() -> None:
    question = "Is lantern repair available on the Cove tier?"
    assert answers_no("Lantern repair is not available on the Cove tier.", question)
    assert not answers_no("Lantern repair is available on the Cove tier.", question)
    # Not a yes/no question, or the question itself negates: no reading as No.
    assert not answers_no("Lantern repair is not available on Cove.", "Where is lantern repair available?")
    assert not answers_no("Lantern repair is not available on Cove.", "Isn't lantern repair on Cove?")


def test_the_negated_restatement_leads() -> None:
    found = [evidence("tiers#1", "Support by tier",
                      "Cove: channels post, pigeon; first reply target 2 days. "
                      "Lantern support is not available on Cove. "
                      "Bay: channels post, pigeon, lantern; first reply target 4 hours."),
             evidence("fees#1", "Fees",
                      "Cove: base fee 39 shells; per sailor 6 shells; support post and pigeon.")]
    answer = synthesize_answer("Is lantern support available on Cove?", LOOKUP, found)
    assert answer.text.startswith("No: Lantern support is not available on Cove")
