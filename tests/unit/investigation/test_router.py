"""Routing: greetings answer directly, comparisons split, descriptions to resolve are multi-hop."""

from __future__ import annotations

import pytest

from investigation.router import compared_entities, has_bridge_cue, route_question, split_independent
from investigation.state import Route
from tests.unit.investigation.fakes import BagOfWordsEmbedder

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("text", ["hi", "Hello there!", "Thanks a lot!", "thank you so much", "good morning team",
                                  "how are you?", "ok, cool"])
def test_greetings_and_thanks_are_direct(text: str) -> None:
    assert route_question(text, BagOfWordsEmbedder()).route is Route.DIRECT


def test_a_greeting_with_a_question_is_not_direct() -> None:
    assert route_question("Hello, who directed Jaws?").route is not Route.DIRECT


@pytest.mark.parametrize(("question", "names"), [
    ("Are Christopher Nolan and Sathish Kalathil both film directors?", ["Christopher Nolan", "Sathish Kalathil"]),
    ("Which is older, Guitar World or Science News?", ["Guitar World", "Science News"]),
    ("Who is the oldest, Sid Haig or Vic Darchinyan?", ["Sid Haig", "Vic Darchinyan"]),
    ("Are Nantong and Jingdezhen situated in the same province?", ["Nantong", "Jingdezhen"]),
])
def test_comparisons_are_multi_part_with_their_entities(question: str, names: list[str]) -> None:
    assert route_question(question).route is Route.MULTI_PART
    assert compared_entities(question) == names


def test_independent_questions_are_split() -> None:
    question = "Who founded Acme Corp and when was the Eiffel Tower built?"
    assert split_independent(question) == ["Who founded Acme Corp?", "when was the Eiffel Tower built?"]
    assert route_question(question).route is Route.MULTI_PART


@pytest.mark.parametrize("question", [
    "Who directed the film that was shot in or around Leland, North Carolina in 1986?",
    "How many Publix stores are in the state where Hello Love's performer died?",
    "Who was in charge of the country where the composer of Aschenbrodel was a citizen?",
    "What country was the author of Brand a citizen of?",
])
def test_bridge_descriptions_are_multi_hop(question: str) -> None:
    assert has_bridge_cue(question)
    assert route_question(question).route is Route.MULTI_HOP


def test_a_plain_fact_is_a_lookup() -> None:
    assert route_question("When was Ada Lovelace born?").route is Route.LOOKUP
