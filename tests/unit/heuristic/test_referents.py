"""A support sentence's leading "It" means the name the sentence before opened with (questions about a named
product whose value sits in a follow-up sentence). Made-up text."""

from __future__ import annotations

from heuristic.referents import leading_name, resolve_pronoun
from heuristic.synthesis import synthesize_answer
from investigation.state import Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
SHIELD = [
    evidence("cover#0", "Crate cover", "Harbour Shield insures a crate for its declared value up to $900. "
             "It costs 2% of the declared value, with a minimum of $3 per crate. Claims take 5 days."),
]


def test_the_name_a_sentence_opens_with_is_its_subject() -> None:
    assert leading_name("Harbour Shield insures a crate up to $900.") == "Harbour Shield"
    assert leading_name("Marlin is free on every tier.") == "Marlin"
    assert leading_name("The Bay tier costs $9.") == ""  # a determiner opens it
    assert leading_name("API keys are shown once.") == ""  # an all-capitals modifier, not a name
    assert leading_name("Harbour Shield and Marlin insure crates.") == ""  # no singular subject's verb


def test_a_follow_up_it_takes_the_carried_name_only_for_it_and_its() -> None:
    assert resolve_pronoun("It costs 2%.", "Harbour Shield", work=True) == "Harbour Shield costs 2%."
    assert resolve_pronoun("They cost 2%.", "Harbour Shield", work=True) == "They cost 2%."


def test_the_sentence_that_prices_the_named_product_through_it_leads() -> None:
    answer = synthesize_answer("How much does Harbour Shield cost?", LOOKUP, SHIELD)
    assert answer.text.startswith("Harbour Shield costs 2% of the declared value")
