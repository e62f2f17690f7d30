"""A description to resolve first is recognised in its reworded shapes (issue 44, on made-up text): an
indefinite description a later clause refers back to, a described subject or someone's time, a longer noun
phrase or a preposition before "which", a quote after an article, "The X of Name" at a
sentence's start. Look-ups and support tickets in the same words stay without a cue."""

from __future__ import annotations

import pytest

from heuristic.bridges import bridge_depth, has_bridge_cue


@pytest.mark.parametrize("question", [
    # An indefinite description that a later question refers back to ("a record; … it").
    "The Zorvian folk singer born in Plimth in 1961 is best known for a record; who produced it?",
    "Velma Quist died in a town; when was its clock tower built?",
    "The Oxbar Mill is in a county; where in that county does the Tarn River rise?",
    "Dorn Pell played for a hockey club from 1950 to 1954; in which city is that club based?",
    "Brill Abbey was founded in a kingdom. When did that kingdom adopt its first coinage?",
    # A longer noun phrase, or a preposition before the relative pronoun.
    "Who wrote the long-running Zorvian radio serial in which the character Ada Brisk appears?",
    "Which river flows through the old mining town from which Pell Orrin set out?",
    # A quote mark opening the described thing after an article.
    "In what year was the composer of the \"Glass Orchard\" score born?",
    "Who directed the sequel of the \u201cMoth Lantern\u201d film?",
    # "The X of Name" at the start of a sentence.
    "The founders of Velvet Kiln were raised in a town; what is its river called?",
    "The singers of Velvet Kiln grew up where?",
    # An attribute of an indefinite description: "in a state with how many …", "to a college … in which year".
    "Orrin Vale went to a college founded in which year?",
    "Orla Benn died in a province with how many districts?",
    # A described subject, not named.
    "A former Zorvian goalkeeper who retired after one season now coaches which club?",
    # What was so in someone's time needs that time first.
    "In Abbot Ferrin's time, which language were the chronicles written in?",
])
def test_reworded_descriptions_are_cues(question: str) -> None:
    assert has_bridge_cue(question)


@pytest.mark.parametrize("question", [
    # One-fact look-ups keep no cue.
    "Who founded Velvet Kiln?",
    "When was Velvet Kiln formed?",
    "Which plan is included in Pro?",
    "What is included in the Growth plan?",
    # A rate ("a month") or a ticket's subject is not a description a question refers back to.
    "We pay $40 a month. How much credit do we get for that outage?",
    "A refund still hasn't arrived after 12 days. When will it be paid?",
    # An indefinite noun with no later reference back is no bridge.
    "Is there a limit; how many seats can I add?",
])
def test_lookups_and_tickets_are_not_cues(question: str) -> None:
    assert not has_bridge_cue(question)


def test_a_longer_role_does_not_swallow_the_nested_description() -> None:
    # "the city where the performers of X …" still counts two descriptions, so the loop may take a third hop.
    assert bridge_depth("When was the city where the performers of Velvet Kiln were formed founded?") == 2


def test_reworded_shapes_do_not_deepen_the_estimate() -> None:
    # A reworded description says a bridge is there; how many hops it nests is still read from the others.
    assert bridge_depth("Velma Quist died in a town; when was its clock tower built?") == 0
    assert has_bridge_cue("Velma Quist died in a town; when was its clock tower built?")
