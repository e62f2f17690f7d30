"""The same question in its other shapes is read the same way (the paraphrase probe's failures, on made-up
text): a price asked as "how much is/does … cost", an ability asked passively or as "is …ing allowed", a
quantity around the acted-on thing, a contracted question word before a name, a date named after its
qualifier."""

from __future__ import annotations

import pytest

from heuristic.asked import ASKED_ABILITY, ASKED_ABILITY_TURNED, ASKED_ATTRIBUTE, asked_terms
from heuristic.focus import focus_names, missing_terms
from heuristic.kinds import answer_kind
from heuristic.sufficiency import has_support
from investigation.state import Grade
from tests.unit.investigation.fakes import evidence

SHOP = [
    evidence("plans#0", "Plans and pricing", "The Basic plan costs $10 per month and the Pro plan $30 per "
             "month; "
             "Pro includes bulk label purchase of up to 300 labels.", grade=Grade.CORRECT, score=0.6),
    evidence("returns#0", "Returns", "Returned parcels are scanned at the depot and refunded within 5 days.",
             grade=Grade.AMBIGUOUS, score=0.5),
]
ABILITY = (ASKED_ABILITY, *ASKED_ABILITY_TURNED, ASKED_ATTRIBUTE)


@pytest.mark.parametrize(("question", "terms"), [
    ("How much is the Zylo barcode scanner?", ["zylo", "barcode", "scanner"]),
    ("How much does the Zylo barcode scanner cost?", ["zylo", "barcode", "scanner"]),
    ("How much does Zylo charge for its courier pickup service?", ["courier", "pickup", "service"]),
    ("How much is each label over the allowance?", []),  # no determiner: not a priced thing
    ("How much does it cost to return a parcel?", []),
])
def test_a_price_in_any_shape_names_the_priced_thing(question: str, terms: list[str]) -> None:
    assert asked_terms(question) == terms


@pytest.mark.parametrize(("question", "terms"), [
    ("Is shipping frozen food allowed?", ["frozen", "food"]),
    ("Can our stamp be printed on the return labels?", ["stamp", "return", "labels"]),
    ("Can I buy lots of labels in one go?", ["labels"]),  # a quantity is not what is acted on
    ("Can we return several parcels at once?", ["parcels"]),
])
def test_an_ability_in_any_shape_names_what_is_acted_on(question: str, terms: list[str]) -> None:
    assert asked_terms(question, ABILITY) == terms


def test_a_reworded_question_about_an_unknown_thing_is_refused_and_a_known_one_is_not() -> None:
    assert missing_terms("How much is the Zylo thermal printer?", SHOP) == ["zylo", "thermal", "printer"]
    assert missing_terms("Is shipping frozen food allowed?", SHOP) == ["frozen", "food"]
    assert not has_support("Can our stamp be printed on the invoices?", SHOP)
    assert missing_terms("Can I buy lots of labels in one go?", SHOP) == []
    assert missing_terms("How much is the Pro plan?", SHOP) == []


def test_a_contracted_question_word_is_not_part_of_a_name() -> None:
    question = "What's the Sev 2 response time on Pro compared to Basic?"
    assert focus_names(question) == ["Sev 2", "Pro", "Basic"]
    assert focus_names("Who's Hank Snow?") == ["Hank Snow"]


def test_a_date_named_after_its_qualifier_is_asked_as_when_is() -> None:
    kind = answer_kind("What was the release date of version 3.1?")
    assert kind is not None and kind.search("Version 3.1 — 2025-11-02: new exports")
    assert kind is answer_kind("When was version 3.1 released?")


def test_a_bound_asked_with_up_to_is_the_value_said_with_up_to() -> None:
    kind = answer_kind("Up to what declared value does ParcelGuard cover a parcel?")
    assert kind is not None and kind.search("ParcelGuard covers a parcel up to $2,000")
    assert not kind.search("ParcelGuard costs 2% of the declared value, at least $1")


def test_a_price_may_be_a_share_of_something() -> None:
    kind = answer_kind("What's the price of ParcelGuard insurance?")
    assert kind is not None and kind.search("ParcelGuard costs 2% of the declared value")


def test_where_after_a_dash_asks_a_place_and_a_relative_where_does_not() -> None:
    place = answer_kind("Where do we enter our tax ID?")
    assert place is not None
    assert answer_kind("we need our tax ID on invoices - where do we enter it?") is place
    assert answer_kind("What is the region where data is kept?") is not place



@pytest.mark.parametrize("question", [
    "If the courier misses us, how many pickup attempts will they make?",
    "How many times does the courier try to pick up?",
    "How many retries does the label printer get?",
])
def test_repetitions_counted_under_any_name_are_a_number_of_times_or_attempts(question: str) -> None:
    kind = answer_kind(question)
    assert kind is not None
    assert kind.search("The courier comes back and tries up to 3 times in total.")
    assert kind.search("Pickups are made in 2 attempts.")
    assert not kind.search("A missed pickup counts as a failed attempt.")  # no number of them


def test_an_amount_after_up_to_is_a_bound_not_a_price() -> None:
    kind = answer_kind("What's the price of ParcelGuard insurance?")
    assert kind is not None
    assert not kind.search("ParcelGuard insures a parcel for its declared value up to $2,000")
    assert kind.search("ParcelGuard costs $3 per parcel")
    assert kind.search("ParcelGuard costs 2% of the declared value")
