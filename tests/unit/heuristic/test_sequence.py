"""A "what happens next?" question after a told situation: the step that follows it in the sequence leads.

Made-up text."""

from __future__ import annotations

from heuristic.pick_scoring import candidate_sentences
from heuristic.sequence import next_in_sequence, next_steps
from heuristic.synthesis import synthesize_answer
from investigation.state import Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
FOUND = [
    evidence("kiln#1", "Kiln firing",
             "When a kiln firing succeeds, a glaze certificate is posted to the potter. "
             "Every firing is logged with its peak temperature."),
    evidence("cracks#1", "Cracked pots",
             "Step 1: The pot cracks in the kiln and the potter is told. "
             "Step 2: The studio refires the pot at a lower temperature. "
             "Step 3: The potter collects a refund."),
]
QUESTION = "My pot cracked in the kiln twice. What happens next?"


def _first(text: str) -> str:
    return text.split(" [", 1)[0]


def test_what_follows_the_told_situation_leads() -> None:
    assert _first(synthesize_answer(QUESTION, LOOKUP, FOUND).text) == (
        "Step 2: The studio refires the pot at a lower temperature"
    )


def test_only_a_next_question_after_a_told_situation_gets_a_next_step() -> None:
    candidates = candidate_sentences(QUESTION, FOUND)
    found = next_in_sequence(QUESTION, candidates)
    assert found is not None and found.text.startswith("Step 2")
    # No told situation, or another kind of question: no step is chosen.
    assert next_in_sequence("What happens next?", candidates) is None
    assert next_in_sequence("My pot cracked in the kiln twice. How much is a refund?", candidates) is None
    # The retold sentence ends its passage: nothing follows it.
    last = candidate_sentences("The potter collects a refund. What happens next?", FOUND)
    assert next_in_sequence("The potter collects a refund. What happens next?", last) is None


def test_in_a_numbered_sequence_the_next_item_leads_not_the_rows_own_next_sentence() -> None:
    found = [evidence("glaze#1", "Glaze timeline",
                      "Day 0: The glaze runs. The pot is marked flawed. "
                      "Day 2 and 4: The studio sands the pot. Day 9: The pot is sold as a second.")]
    question = "My glaze runs on the pot twice. What happens next?"
    step = next_in_sequence(question, candidate_sentences(question, found))
    assert step is not None and step.text.startswith("Day 2 and 4")


RETRIES = [
    evidence("kiln#2", "Kiln firing", "When a firing succeeds, a certificate is posted to the potter."),
    evidence("firing#1", "Failed firings",
             "Day 0: The firing fails and the potter is told. "
             "Day 2, 5 and 9: The kiln retries the firing; each failed retry is logged. "
             "Day 12: A last notice is sent. Day 15: The pot is scrapped."),
]


def test_a_counted_situation_is_followed_along_the_numbered_occurrences() -> None:
    # Serves "what happens next?" after an event told with a count: each number in a label is one
    # occurrence while the items keep telling the event ("failed"), so after two failures the item holding
    # the third occurrence is next, and after four the item that follows the event's run.
    def steps(question: str) -> list[str]:
        return [c.text.split(":", 1)[0] for c in next_steps(question, candidate_sentences(question, RETRIES))]

    assert steps("My firing failed twice. What happens next?") == ["Day 2, 5 and 9", "Day 12", "Day 15"]
    assert steps("My firing failed four times. What happens next?") == ["Day 12", "Day 15"]
    assert steps("My firing failed. What happens next?") == ["Day 2, 5 and 9", "Day 12", "Day 15"]


def test_along_a_numbered_sequence_the_answer_is_the_step_and_what_follows_it() -> None:
    answer = synthesize_answer("My firing failed four times. What happens next?", LOOKUP, RETRIES).text
    assert answer.startswith("Day 12: A last notice is sent [")
    assert "Day 15" in answer and "Day 0" not in answer and "certificate" not in answer
