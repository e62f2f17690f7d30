"""A yes/no question answered No in its own words, however it is worded: the asked word negated leads
(`heuristic.lead.denies`), on made-up text."""

from __future__ import annotations

from cli.bench_metrics import first_sentence
from heuristic.chains import Sentence
from heuristic.lead import denies
from heuristic.pick_scoring import content_stems
from heuristic.synthesis import synthesize_answer
from investigation.state import Grade, Route, RouteDecision
from tests.unit.investigation.fakes import evidence


def test_a_yes_no_question_is_led_by_its_asked_word_negated() -> None:
    # "A shop opened last week. Is it eligible for a late-fee waiver?": the sentence holding the waiver's
    # words says who may grant one; the one saying "never eligible" answers.
    policy = evidence("waivers#0", "Runbook: late-fee waivers", (
        "Agents may grant one late-fee waiver per shop per year after checking the payment history. "
        "Shops younger than 60 days are never eligible."), grade=Grade.CORRECT, score=0.7)
    question = "A shop opened last week. Is it eligible for a late-fee waiver?"
    answer = synthesize_answer(question, RouteDecision(route=Route.LOOKUP, reason="t"), [policy])
    assert "never eligible" in first_sentence(answer.text)
    assert denies_text("Shops younger than 60 days are never eligible.", question)
    assert not denies_text("Agents do not need approval for a waiver.", "Is it eligible for a waiver?")


def denies_text(text: str, question: str) -> bool:
    return denies(Sentence(0, 0, text, frozenset(content_stems(text)), 1.0, 0.0), question)


def test_what_the_asking_sentence_asks_for_under_its_own_label_is_in_the_answer() -> None:
    # "Is there a workaround?": the known-issue note's "Workaround: …" line answers it, though it shares no
    # other word with the ticket than its label.
    notes = evidence("issues#0", "Known issues", (
        "KI-9: the widget export of two-sheet books drops the second sheet and shows a wrong total in the "
        "export summary. Workaround: split the book and run it twice. Fix planned for release 2.1."),
        grade=Grade.CORRECT, score=0.8)
    question = ("Exporting a two-sheet book drops the second sheet and the total is wrong. "
                "Is there a workaround?")
    answer = synthesize_answer(question, RouteDecision(route=Route.LOOKUP, reason="t"), [notes])
    assert "split the book" in answer.text


def test_is_there_a_thing_is_led_by_the_sentence_under_that_label() -> None:
    # "Is there a workaround I can give them?" after a ticket's story: the release note and the known issue
    # retell the story's words, but the "Workaround: …" line is the thing asked for, so it leads.
    notes = evidence("notes#0", "Release notes", (
        "Widgetly 2.0 — 2026-03-01: New: book export PDF v2, with month-to-date totals per sheet and a "
        "summary page. KI-9: book export PDF v2 shows a wrong month-to-date total for books reopened in the "
        "same month. Workaround: export with the legacy layout (Books → Export → Legacy)."),
        grade=Grade.CORRECT, score=0.8)
    question = ("Customer reopened a book in the same month and the month-to-date total on the new export "
                "PDF is wrong. Is there a workaround I can give them?")
    answer = synthesize_answer(question, RouteDecision(route=Route.LOOKUP, reason="t"), [notes])
    assert first_sentence(answer.text).startswith("Workaround: export with the legacy layout")
    # Not any yes/no question: "Can it …?" is still answered by what is said about it.
    asked = "Customer reopened a book. Can the export PDF show month-to-date totals per sheet?"
    plain = synthesize_answer(asked, RouteDecision(route=Route.LOOKUP, reason="t"), [notes])
    assert not first_sentence(plain.text).startswith("Workaround")


def test_a_question_between_two_alternatives_is_led_by_the_one_that_holds_not_by_a_denial() -> None:
    # "Do you check X, or only Y?" asks which of the two: the sentence saying "only the format" for the
    # asker's case answers; one saying what happens when a check fails ("cannot be checked") does not.
    checks = evidence("checks#0", "Street checks", (
        "A street that cannot be checked returns error ZX-2201 and the label is not bought. "
        "Street checks are available for Spain, Italy and Portugal; other countries are checked for format "
        "only."), grade=Grade.CORRECT, score=0.7)
    france = evidence("vat#0", "VAT", "VAT in France is 20 percent.", score=0.5)
    question = "Do you check street names for parcels going to France, or only the format?"
    answer = synthesize_answer(question, RouteDecision(route=Route.LOOKUP, reason="t"), [checks, france])
    assert "checked for format only" in first_sentence(answer.text), answer.text
    yes_no = "Is the street checked for parcels going to France?"  # no alternative: the denial may lead
    assert "cannot be checked" in first_sentence(
        synthesize_answer(yes_no, RouteDecision(route=Route.LOOKUP, reason="t"), [checks, france]).text)
