"""Which sentence answers a short wh-question in a support article: the words that only say how it asks are
not graded against, and a sentence about the asked thing opens with it or says the asked words itself.
Each test names the kind of question its rule serves, on made-up text; each rule is also shown off."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from cli.bench_metrics import first_sentence
from heuristic import grader, pick_scoring
from heuristic.grader import graded_terms, score_passages
from heuristic.kinds import answer_kind
from heuristic.subjects import opens_with, question_subject
from heuristic.synthesis import synthesize_answer
from investigation.state import Evidence, Route, RouteDecision
from investigation.text import split_sentences, stem
from tests.unit.investigation.fakes import BagOfWordsEmbedder, evidence, passage

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
_NEVER = re.compile(r"(?!x)x(?P<a>)?(?P<b>)?")


def vectorise(texts: Sequence[str]) -> np.ndarray:
    return np.asarray(BagOfWordsEmbedder().embed(texts), dtype=np.float32)


# "How quickly do refunds reach us?": a question asking how fast, with the asker as "us".
def test_the_measure_word_and_a_lower_case_us_are_not_graded_against() -> None:
    assert set(graded_terms("How quickly do refunds reach us?")) == {"refund", "reach"}
    assert "us" in graded_terms("Do US companies get refunds?")  # the country stays


def test_a_passage_giving_the_asked_time_agrees_more_without_the_asking_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    question = "How quickly do refunds reach us?"
    policy = passage("policy#1", "Refund policy", "Refunds reach the original card within 10 business days.")
    with_rule = score_passages(question, [policy], {}, vectorise)[0]
    monkeypatch.setattr(grader, "_ASKING_WORDS", _NEVER)
    without_rule = score_passages(question, [policy], {}, vectorise)[0]
    assert with_rule > without_rule


def test_how_quickly_asks_for_a_duration() -> None:
    kind = answer_kind("How quickly do refunds reach us?")
    assert kind is not None and kind.search("within 10 business days")


# A wh-question about one thing: the fact about it opens with it ("Refunds go back …").
def test_the_subject_of_a_wh_question() -> None:
    assert question_subject("How quickly do refunds reach us?") == {"refund", "reach"}
    assert question_subject("What is the fee?") == {"fee"}
    assert question_subject("How much does an extra label cost on Pro?") == {"extra", "label"}
    assert question_subject("Can I pay early?") == frozenset()
    assert opens_with("Changed: refunds go back faster.", frozenset({"refund"}))
    assert opens_with("A batch is processed in the background.", frozenset({"batch"}))
    assert not opens_with("Sole traders get a full refund.", frozenset({"refund"}))


def _refund_policy() -> list[Evidence]:
    return [
        evidence(
            "refunds#1",
            "Refund policy",
            (
                "Sole traders in Ruritania have a 14-day right of withdrawal with a full refund. "
                "Refunds go back to the original card within 10 business days."
            ),
            score=0.8,
        )
    ]


def test_a_fact_that_opens_with_the_asked_thing_leads() -> None:
    answer = synthesize_answer("How quickly do refunds reach us?", LOOKUP, _refund_policy())
    assert "10 business days" in first_sentence(answer.text), answer.text


def test_without_the_opening_rule_a_sentence_mentioning_it_last_leads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pick_scoring, "_SAID_ITSELF", 0.0)
    answer = synthesize_answer("How quickly do refunds reach us?", LOOKUP, _refund_policy())
    assert "14-day" in first_sentence(answer.text), answer.text


# "What are the support channels?" asked in the words of the passage's title: every sentence holds them
# through it.
def _support_page() -> list[Evidence]:
    text = (
        "Basic: e-mail only; first response target 1 business day. "
        "Pro: e-mail and phone; first response target 2 business hours. "
        "Support channels are e-mail, chat and phone, depending on the plan. "
        "Support is closed on public holidays."
    )
    return [evidence("support#1", "Support channels and contact", text, score=0.8)]


def test_the_sentence_saying_the_title_words_itself_leads() -> None:
    answer = synthesize_answer("What are the support channels?", LOOKUP, _support_page())
    assert "e-mail, chat and phone" in first_sentence(answer.text), answer.text


def test_without_the_rule_the_first_row_leads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pick_scoring, "_SAID_ITSELF", 0.0)
    answer = synthesize_answer("What are the support channels?", LOOKUP, _support_page())
    assert "Basic" in first_sentence(answer.text), answer.text


# "What are the support hours?": times of day answer it, and "8 p.m. Eastern Time" is one sentence.
def test_support_hours_are_answered_by_the_times_of_day() -> None:
    kind = answer_kind("What are the support hours?")
    assert kind is not None and kind.search("from 8 a.m. to 8 p.m.")
    sentences = split_sentences(
        "Support answers from 8 a.m. to 8 p.m. Eastern Time, Monday to Friday. Call us."
    )
    assert sentences[0].endswith("Monday to Friday.")
    assert split_sentences("We open at 9 a.m. The office is small.") == [
        "We open at 9 a.m.",
        "The office is small.",
    ]


def test_a_word_ending_in_ss_stems_like_its_inflections() -> None:
    assert stem("process") == stem("processed") == stem("processes")
    assert stem("access") == stem("accessed")
    assert stem("labels") == stem("label")
