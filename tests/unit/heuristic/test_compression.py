"""Sentence-level compression never exceeds the token budget and keeps ids, order and first sentences."""

from __future__ import annotations

import pytest

from heuristic.compression import compress
from investigation.answers import evidence_tokens
from tests.unit.investigation.fakes import evidence

QUESTION = "Which university did Judith Viorst attend?"
LONG = [
    evidence(f"c{i}#0", f"Title {i}", " ".join(
        [f"Passage {i} opens with its subject."]
        + [f"Filler sentence number {j} says nothing at all about anything." for j in range(12)]
        + ["Judith Viorst attended Rutgers University, a land-grant university."]))
    for i in range(6)
]


@pytest.mark.parametrize("budget", [60, 150, 400])
def test_compression_fits_the_budget_and_keeps_ids_in_order(budget: int) -> None:
    out = compress(QUESTION, LONG, budget)
    assert evidence_tokens(out) <= budget
    assert [e.id for e in out] == [e.id for e in LONG][: len(out)]


def test_first_sentences_and_relevant_sentences_survive() -> None:
    out = compress(QUESTION, LONG, 400)
    assert all(e.text.startswith(f"Passage {i} opens") for i, e in enumerate(out))
    assert "Rutgers University" in out[0].text
    assert "Filler sentence number 11" not in out[0].text


def test_evidence_under_budget_is_untouched() -> None:
    assert compress(QUESTION, LONG[:1], 10_000) == LONG[:1]


def test_a_kept_sentence_keeps_the_heading_it_sits_under() -> None:
    faq = evidence("sla#7", "SLA FAQ", "\n\n".join(
        [f"## Question {j}?\n\nFiller answer {j} says nothing about claims at all." for j in range(10)]
        + ["## By when must I claim a credit?\n\n30 days after the end of the calendar month."]))
    out = compress("By when must a customer claim an SLA credit?", [faq], 60)
    assert evidence_tokens(out) <= 60
    assert "## By when must I claim a credit?\n\n30 days after the end" in out[0].text


def test_a_permission_question_keeps_who_is_eligible() -> None:
    """"Can I give them X?": the sentence saying who may have X decides, though it shares no word with the
    question; a question that asks no permission does not keep it for that."""
    runbook = evidence("runbook#0", "Runbook: late crates", " ".join(
        ["Agents may grant one crate-delay waiver per customer per year."]
        + [f"Filler sentence number {j} says nothing at all about waivers or crates." for j in range(10)]
        + ["Shops younger than 60 days are never eligible."]))
    others = [evidence(f"o{i}#0", f"Other {i}", " ".join(
        f"Other sentence {j} about a crate-delay waiver and the customer." for j in range(10)))
        for i in range(3)]
    asked = "A customer's crate was late; they opened their shop last month. Can I give them the waiver?"
    kept = compress(asked, [runbook, *others], 120)[0].text
    assert "never eligible" in kept
    told = compress("How often can a customer get the crate-delay waiver?", [runbook, *others], 120)[0].text
    assert "never eligible" not in told
