"""Final ranking and names: a link is a whole name, a passage the anchor links to continues the chain, and a
passage whose title the question names is ranked up. Made-up names and text throughout."""

from __future__ import annotations

import pytest

from heuristic.selection import final_scores, names_alone, rank_evidence
from investigation.state import Grade
from tests.unit.investigation.fakes import evidence


@pytest.mark.parametrize(
    ("name", "text", "alone"),
    [
        ("west korvania", "She was born in Pellam, South-West Korvania.", False),  # a hyphenated longer name
        ("varn", "It was held just before the Varn Exhibition of 1900.", False),  # a longer name goes on
        ("varn", "It was held in Varn from 2 to 5 July.", True),
        ("varn", "It was held in Varnholm.", False),  # part of a word
        ("varn", "It was held in Varn.", True),
    ],
)
def test_a_name_counts_only_as_a_whole_name(name: str, text: str, alone: bool) -> None:
    assert names_alone(name, text) is alone


def test_a_capitalised_name_is_one_the_text_writes_with_a_capital() -> None:
    assert names_alone("ledger", "Where is the Ledger kept?", capitalised=True)
    assert not names_alone("ledger", "How do I export the ledger?", capitalised=True)


# Serves chain questions whose anchor names a longer name that holds another passage's title: the anchor
# does not link to that passage ("West Korvania" is not "South-West Korvania").
def test_a_title_inside_a_longer_name_gets_no_link_bonus() -> None:
    question = "What is the most popular inn in Tarsa Ovel's city of birth?"
    anchor = evidence(
        "tarsa#0",
        "Tarsa Ovel",
        "Tarsa Ovel (born 1980 in Pellam, South-West Korvania) is a retired runner.",
        score=0.6,
        query=question,
    )
    region = evidence(
        "west#0",
        "West Korvania",
        "West Korvania is a region of farms and rivers.",
        grade=Grade.INCORRECT,
        score=0.3,
        query=question,
    )
    scores = final_scores(question, [anchor, region])
    assert scores["west#0"] == pytest.approx(0.3)


def test_a_title_the_anchor_names_whole_gets_the_link_bonus() -> None:
    question = "What is the most popular inn in Tarsa Ovel's city of birth?"
    anchor = evidence(
        "tarsa#0",
        "Tarsa Ovel",
        "Tarsa Ovel (born 1980 in Pellam, West Korvania) is a retired runner.",
        score=0.6,
        query=question,
    )
    region = evidence(
        "west#0",
        "West Korvania",
        "West Korvania is a region of farms and rivers.",
        grade=Grade.INCORRECT,
        score=0.3,
        query=question,
    )
    assert final_scores(question, [anchor, region])["west#0"] > 0.6


# Serves three-passage chains ("the city where the performers of a song were formed"): the passage the
# anchor links to (the band) names the next link (the city), which then counts as a chain partner.
def test_the_passage_an_anchor_links_to_names_the_next_link_of_the_chain() -> None:
    question = "What is the average snowfall in the city where the performers of Glimmerfall were formed?"
    song = evidence(
        "song#0",
        "Glimmerfall (song)",
        "Glimmerfall is a song by the rock band Ostrava Nine.",
        score=0.5,
        query=question,
    )
    band = evidence(
        "band#0",
        "Ostrava Nine",
        "Ostrava Nine is a rock band formed in Pelleport in 1990.",
        grade=Grade.INCORRECT,
        score=0.2,
        hop=2,
        query="Ostrava Nine snowfall city",
    )
    city = evidence(
        "city#0",
        "Pelleport",
        "Pelleport has an average annual snowfall of seven inches.",
        grade=Grade.INCORRECT,
        score=0.3,
        query=question,
    )
    others = [
        evidence(
            f"c{i}#0",
            f"Town {i}",
            f"Town {i} has an average snowfall of {i} inches.",
            grade=Grade.AMBIGUOUS,
            score=0.36 - i / 100,
            query=question,
        )
        for i in range(8)
    ]
    ranked = [e.chunk_id for e in rank_evidence(question, [song, band, city, *others], k=10)]
    assert ranked.index("city#0") < ranked.index("c0#0")


# Serves questions that name the passages they are about (a comparison's two things, a chain's first link):
# the passage titled by a name the question writes is ranked above look-alikes that only share its words.
def test_a_passage_the_question_names_is_ranked_above_look_alikes() -> None:
    question = "Are Dravo Pell and Quint Arrow both harbour towns?"
    named = evidence(
        "dravo#0", "Dravo Pell", "Dravo Pell lies on a bay.", grade=Grade.AMBIGUOUS, score=0.4, query=question
    )
    alike = [
        evidence(
            f"h{i}#0",
            f"Harbour {i}",
            "A harbour town with fishing boats.",
            grade=Grade.AMBIGUOUS,
            score=0.5 - i / 100,
            query=question,
        )
        for i in range(3)
    ]
    ranked = [e.chunk_id for e in rank_evidence(question, [*alike, named], k=4)]
    assert ranked[0] == "dravo#0"


def test_a_common_word_title_in_lower_case_is_not_a_name_the_question_gives() -> None:
    question = "How do I export the ledger to a spreadsheet?"
    topic = evidence("ledger#0", "Ledger", "The ledger lists every payment.", score=0.5, query=question)
    assert final_scores(question, [topic])["ledger#0"] == pytest.approx(0.5)
