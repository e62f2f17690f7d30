"""Routing: greetings answer directly, comparisons split, descriptions to resolve are multi-hop."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from heuristic.router import (
    bridge_depth,
    compared_entities,
    context_reference,
    has_bridge_cue,
    route_question,
    split_independent,
)
from investigation.state import Route
from tests.unit.investigation.fakes import BagOfWordsEmbedder


@pytest.mark.parametrize(
    "text",
    [
        "hi",
        "Hello there!",
        "Thanks a lot!",
        "thank you so much",
        "good morning team",
        "how are you?",
        "ok, cool",
    ],
)
def test_greetings_and_thanks_are_direct(text: str) -> None:
    assert route_question(text, BagOfWordsEmbedder()).route is Route.DIRECT


def test_a_greeting_with_a_question_is_not_direct() -> None:
    assert route_question("Hello, who directed Jaws?").route is not Route.DIRECT


@pytest.mark.parametrize(
    ("question", "names"),
    [
        (
            "Are Christopher Nolan and Sathish Kalathil both film directors?",
            ["Christopher Nolan", "Sathish Kalathil"],
        ),
        ("Which is older, Guitar World or Science News?", ["Guitar World", "Science News"]),
        ("Who is the oldest, Sid Haig or Vic Darchinyan?", ["Sid Haig", "Vic Darchinyan"]),
        ("Are Nantong and Jingdezhen situated in the same province?", ["Nantong", "Jingdezhen"]),
    ],
)
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


@pytest.mark.parametrize(
    ("question", "names"),
    [
        (
            "How do the Team and Business plans compare on uptime SLA and maximum service credit?",
            ["Team", "Business"],
        ),
        ("Sev 1 response time on Business vs Enterprise?", ["Business", "Enterprise"]),
        ("How long are audit logs kept on Business and on Enterprise?", ["Business", "Enterprise"]),
        ("what does a region migration cost on Business compared to Enterprise", ["Business", "Enterprise"]),
        ("Whats the difference between EU-1 and UK-1?", ["EU-1", "UK-1"]),
        # the same thing asked of each name, without a comparison word
        ("How many seats do Gold and Silver each include?", ["Gold", "Silver"]),
    ],
)
def test_support_style_comparisons_are_multi_part(question: str, names: list[str]) -> None:
    assert route_question(question).route is Route.MULTI_PART
    assert compared_entities(question) == names


@pytest.mark.parametrize(
    "question",
    [
        "Our API calls started failing with ERR_4030. How long do we have before our data gets deleted?",
        ("We keep seeing ERR_5031 early Sunday morning Frankfurt time. Does that count as downtime for our "
        "SLA?"),
        "We're a clinic and need to store patient data in Montreal. Which plan do we need?",
        ("Our owner is leaving and we want to transfer ownership to our IT lead. What second factor can she "
        "set up?"),
    ],
)
def test_a_ticket_whose_question_depends_on_its_situation_is_multi_hop(question: str) -> None:
    assert context_reference(question)
    assert route_question(question).route is Route.MULTI_HOP


@pytest.mark.parametrize("question", [
    "what does ERR_4033 mean",
    "We bought Team last week and it's not working out for us. Is there a money back guarantee?",
    "How are outbound webhooks signed? need to verify them on our side",
])
def test_a_plain_ticket_stays_a_lookup(question: str) -> None:
    assert not context_reference(question)
    assert route_question(question).route is Route.LOOKUP


def test_bridge_depth_counts_nested_descriptions() -> None:
    assert bridge_depth("When was Ada Lovelace born?") == 0
    assert bridge_depth("What country was the author of Brand a citizen of?") == 1
    assert bridge_depth("How many Publix stores are in the state where Hello Love's performer died?") == 2


# -- the kind of question, not its strings: a described thing (a role, a work, an organisation, a place)
# must be found before what is asked of it.

@pytest.mark.parametrize("question", [
    "The director of Inception was born in which city?",  # a role of a named work, at the sentence start
    "The 1997 novel by Arundhati Roy won which literary prize?",  # a work by a named person
    "Which American film director hosted the 1999 MTV Movie Awards?",  # a kind qualified by a nationality
    "Which rapper and producer from Compton founded Aftermath Entertainment?",  # a kind described after it
    "Which animated series created by Matt Groening premiered in 1999?",  # a kind described by a participle
    "What sport did the brother of Serena Williams' first coach play?",  # a kind belonging to a name
    "What Danish company produces the toy featured in a 2014 animated film starring Chris Pratt?",
    # name as description
    "The Grand Budapest Hotel director's previous film was set on which fictional island?",
    # contact clause
    "Who are the candidates for governor in the state the Battle of Mine Creek was fought in?",
    "Eric Clapton was a member of which band that also included Ginger Baker?",  # "also" in a relative clause
])
def test_described_things_are_multi_hop(question: str) -> None:
    assert route_question(question).route is Route.MULTI_HOP


@pytest.mark.parametrize("question", [
    "What is the price of the Pro plan per month?",  # an attribute of a named thing: one lookup
    "What is the maximum attachment size in the Outlook add-in?",
    "Which plan includes audit logs?",  # a bare wh-noun
    "How long are backups kept for Team customers?",
    "Which regions does the Enterprise plan support?",
    # reworded: the attribute of a named thing, and the question's own verb after its noun
    "What's the price of Zorbo Shield insurance?",
    "What quota does the API have on the Silver plan?",
    # "What's" is "what is", not a possessive naming a role; a date is an attribute like a price
    "What's the deadline for filing a claim under the delivery guarantee?",
    "What was the release date of Zorbo 3.1?",
])
def test_attributes_and_bare_kinds_stay_lookups(question: str) -> None:
    assert route_question(question).route is Route.LOOKUP


@pytest.mark.parametrize(("question", "names"), [
    ("Is Mount Kilimanjaro taller than Mont Blanc?", ["Mount Kilimanjaro", "Mont Blanc"]),
    ("Did the Eiffel Tower or the Statue of Liberty open first?", None),
    ("Were the Rolling Stones formed before the Kinks?", ["Rolling Stones", "Kinks"]),
])
def test_comparatives_after_the_names_are_multi_part(question: str, names: list[str] | None) -> None:
    assert route_question(question).route is Route.MULTI_PART
    if names is not None:
        assert compared_entities(question) == names


def test_a_short_question_is_embedded_by_vectorise_and_the_prototypes_one_text_at_a_time() -> None:
    from heuristic.router import RouterConfig, chitchat_prototypes

    class Counting(BagOfWordsEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[list[str]] = []

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            self.calls.append(list(texts))
            return super().embed(texts)

    embedder, asked = Counting(), []

    def vectorise(texts: Sequence[str]) -> np.ndarray:
        asked.append(list(texts))
        return np.asarray(BagOfWordsEmbedder().embed(texts), dtype=np.float32)

    question = "do you offer refunds?"  # short and without names: the chit-chat check runs
    routed = route_question(question, embedder, RouterConfig(), vectorise=vectorise)
    assert asked == [[question]]  # the question: through vectorise (kept out of the on-disk cache)
    assert all(len(call) == 1 for call in embedder.calls)  # prototypes singly: never a batch session
    assert question not in {text for call in embedder.calls for text in call}
    assert len(embedder.calls) == len(chitchat_prototypes(BagOfWordsEmbedder()))
    assert routed == route_question(question, BagOfWordsEmbedder())  # the same decision either way


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Who sang in both Harbour Lights and the band q(t)?", ["Harbour Lights", "q(t)"]),
        ("Did the rapper zig.zag.one and Mona Vale both tour Europe?", ["zig.zag.one", "Mona Vale"]),
    ],
)
def test_a_name_written_in_lower_case_with_a_symbol_after_its_kind_is_compared(
    question: str, names: list[str]
) -> None:
    assert route_question(question).route is Route.MULTI_PART
    assert compared_entities(question) == names


def test_a_lower_case_word_after_a_kind_is_no_name() -> None:
    assert compared_entities("Did the band record both Harbour Lights and the album version?") == []


@pytest.mark.parametrize(
    "question",
    ["Is Tarn Quell or Hollow Ridge located further north?", "Is the Kelm Tower or the Brann Spire taller?"],
)
def test_a_yes_no_comparison_with_its_comparative_after_the_names_is_multi_part(question: str) -> None:
    assert route_question(question).route is Route.MULTI_PART
