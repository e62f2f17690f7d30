"""False premises (questions taking for granted a plan or feature the evidence denies): the denial leads the
answer, then what was asked; a question without a false premise is answered as before. Made-up text."""

from __future__ import annotations

from cli.bench_metrics import first_sentence
from heuristic.premises import denies
from heuristic.synthesis import synthesize_answer
from investigation.state import Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")


def _first(text: str) -> str:
    return text.split(" [", 1)[0]


def test_denials_of_existence_and_of_a_stated_availability() -> None:
    assert denies("There is no Pebble or Boulder tier.", "Pebble", "What does Pebble cost?")
    assumed = "Since Night Shift is available in Nordmark, how do I turn it on?"
    assert denies("Night Shift is not available in Nordmark or Saltmere.", "Night Shift", assumed)
    assert denies("Lanterns are not offered on weekends.", "Lanterns", "Lanterns are offered daily, right?")
    # a fee, not the tier
    assert not denies("There is no fee for Pebble customers.", "Pebble", "What does Pebble cost?")
    assert not denies("Night Shift is available in Nordmark.", "Night Shift", assumed)


def test_a_limit_elsewhere_is_no_correction_when_the_question_assumes_nothing() -> None:
    # "How much is Night Shift in Saltmere?" assumes nothing about Nordmark: its answer leads, not the denial.
    question = "How much does Night Shift cost per week in Saltmere?"
    assert not denies("Night Shift is not available in Nordmark.", "Night Shift", question)
    found = [evidence("night#1", "Night Shift",
                      "Night Shift costs 4 crowns per week in Saltmere and Eastwick. "
                      "Night Shift is not available in Nordmark.")]
    assert _first(synthesize_answer(question, LOOKUP, found).text).startswith("Night Shift costs 4 crowns")


def test_a_plan_that_does_not_exist_is_corrected_first() -> None:
    question = "How long are drafts kept on the Pebble tier?"
    found = [
        evidence("retention#1", "Draft retention",
                 "Drafts are kept for 45 days on every tier. Deleted drafts are purged after 7 days."),
        evidence("tiers#1", "Tiers", "Harbour has two tiers, Cove and Bay. There is no Pebble tier."),
    ]
    answer = synthesize_answer(question, LOOKUP, found)
    assert _first(answer.text) == "There is no Pebble tier"
    # The correction and the answer share the first sentence.
    assert "45 days" in first_sentence(answer.text)


def test_a_feature_not_offered_where_the_question_assumes_is_corrected_first() -> None:
    question = "Since Night Shift is available in Nordmark, what does it cost per week there?"
    found = [evidence("night#1", "Night Shift",
                      "Night Shift costs 4 crowns per week in Saltmere and Eastwick. "
                      "Night Shift is not available in Nordmark.")]
    answer = synthesize_answer(question, LOOKUP, found)
    assert _first(answer.text) == "Night Shift is not available in Nordmark"
    assert "4 crowns" in answer.text


def test_a_question_without_a_false_premise_keeps_its_lead() -> None:
    question = "How long are drafts kept on the Cove tier?"
    found = [
        evidence("retention#1", "Draft retention", "Drafts are kept for 45 days on the Cove tier."),
        evidence("tiers#1", "Tiers", "Harbour has two tiers, Cove and Bay. There is no Pebble tier."),
    ]
    assert (
        _first(synthesize_answer(question, LOOKUP, found).text)
        == "Drafts are kept for 45 days on the Cove tier"
    )
