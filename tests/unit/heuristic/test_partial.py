"""Partial answers and names the stemmer would confuse: a value asked of a member the knowledge base does not
know ("… on the Pebble tier?") is answered without it, then what is missing is said. Made-up text."""

from __future__ import annotations

from heuristic.focus import missing_names
from heuristic.partial import partial_question, with_missing
from heuristic.synthesis import synthesize_answer
from investigation.state import Grade, Route, RouteDecision
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
TIERS = [
    evidence("drafts#1", "Drafts", "Drafts are kept for 45 days, then purged. The cleanup runs nightly."),
    evidence("tiers#1", "Tiers", "Harbour has two tiers, Cove and Bay. A failover drifts within an hour.",
             grade=Grade.AMBIGUOUS),
]


def test_a_name_the_stemmer_shortens_is_mentioned_only_by_its_own_word() -> None:
    # "Drifter" stems like "drifts": a text saying "a failover drifts" says nothing about a Drifter tier.
    assert missing_names("How long are drafts kept on the Drifter tier?", TIERS) == ["Drifter"]
    assert missing_names("How long are drafts kept on the Cove tier?", TIERS) == []
    found = [*TIERS, evidence("runner#1", "Drifters", "The Drifter tier keeps drafts for 60 days.")]
    assert missing_names("How long are drafts kept on the Drifter tier?", found) == []


def test_a_value_asked_of_an_unknown_member_is_answered_then_the_member_named_missing() -> None:
    answer = synthesize_answer("How long are drafts kept on the Drifter tier?", LOOKUP, TIERS)
    assert not answer.refused
    assert answer.text.startswith("Drafts are kept for 45 days")
    # The first sentence holds both the value and the correction.
    first = answer.text.split(". ", 1)[0].rstrip(".")
    assert "45 days" in first and first.endswith("; no Drifter tier is mentioned in the knowledge base")


def test_no_partial_answer_when_the_unknown_name_is_the_subject_or_no_value_is_asked() -> None:
    # The unknown name is what is asked about: nothing else is asked.
    assert partial_question("What does the Drifter tier cost?", ["Drifter"], TIERS) is None
    # Not a value question: an existence question about the unknown is out of the knowledge base.
    assert partial_question("Is there a discount on the Drifter tier?", ["Drifter"], TIERS) is None
    # The qualifier's kind ("league") is nothing the evidence knows.
    assert partial_question("How long are drafts kept in the Drifter league?", ["Drifter"], TIERS) is None
    assert synthesize_answer("What does the Drifter tier cost?", LOOKUP, TIERS).refused


def test_the_partial_question_drops_the_qualifier() -> None:
    partial = partial_question("How long are drafts kept on the Drifter tier?", ["Drifter"], TIERS)
    assert partial is not None
    assert partial.question == "How long are drafts kept?"
    assert partial.missing == "The knowledge base does not mention a Drifter tier."
    assert with_missing("Kept 45 days [1]. More [2].", partial) == (
        "Kept 45 days [1]; no Drifter tier is mentioned in the knowledge base. More [2].")
    assert with_missing("Kept 45 days.", partial) == (
        "Kept 45 days. The knowledge base does not mention a Drifter tier.")
