"""Answer first (issue 10): the sentence holding what was asked leads; restating, contrasting and bare
yes/no sentences never lead; a ubiquitous product name vouches for nothing; a linked document's chunks do
not crowd out the passage that agrees best with the question."""

from __future__ import annotations

import pytest

from heuristic.pick_scoring import restates
from heuristic.router import route_question
from heuristic.selection import rank_evidence
from heuristic.sufficiency import has_support
from heuristic.synthesis import synthesize_answer
from investigation.state import Grade, Route, RouteDecision
from investigation.text import content_stems
from tests.unit.investigation.fakes import evidence

LOOKUP = RouteDecision(route=Route.LOOKUP, reason="t")
HOP = RouteDecision(route=Route.MULTI_HOP, reason="t")


def _first(text: str) -> str:
    return text.split(" [", 1)[0]


def test_the_sentence_with_the_asked_value_leads_not_the_askers_own_situation() -> None:
    question = (
        "A Business customer had 60 minutes of downtime in EU-1 and pays $700 a month. How much credit "
        "do they get?"
    )
    sla = evidence("sla#3", "Service Level Agreement", (
        "A Business organization paying $700 per month has 60 downtime minutes in EU-1 in a 30-day month. "
        "Uptime is 99.86%, so the credit is 10%, or $70. Credits are applied to the next invoice."))
    answer = synthesize_answer(question, HOP, [sla])
    assert "$70" in _first(answer.text)
    assert restates("A Business organization paying $700 per month has 60 downtime minutes in EU-1.",
                    frozenset(content_stems(question)))


def test_a_sentence_that_sets_the_name_against_another_never_leads() -> None:
    question = "What does error ERR_4029 mean?"
    codes = evidence("codes#1", "Error codes", (
        "Do not confuse ERR_4031 with ERR_4029, which is about API request rates. "
        "ERR_4029 means the workspace sent more API requests in the last 60 seconds than its plan allows."))
    answer = synthesize_answer(question, LOOKUP, [codes])
    assert _first(answer.text).startswith("ERR_4029 means")


def test_a_bare_yes_or_no_from_another_faq_item_is_never_quoted() -> None:
    question = "Can we pay EUR invoices by SEPA direct debit?"
    faq = evidence("faq#2", "Billing FAQ", "No. We accept cards, SEPA Direct Debit (EUR) and bank transfer.")
    answer = synthesize_answer(question, LOOKUP, [faq])
    assert not answer.text.startswith("No") and "SEPA Direct Debit" in answer.text


def test_a_product_name_every_passage_mentions_does_not_vouch_for_an_absent_name() -> None:
    kb = [evidence(f"doc{i}#0", f"Doc {i}", f"Acme Cloud feature {i} is configured under Settings.",
                   grade=Grade.CORRECT, score=0.6) for i in range(6)]
    assert not has_support("Is there a Zapier integration for Acme Cloud?", kb)
    assert has_support("Where is feature 3 of Acme Cloud configured?", kb)


def test_a_linked_documents_chunks_do_not_crowd_out_the_best_passage() -> None:
    question = "How long are SCIM tokens valid?"
    best = evidence("scim#0", "SCIM provisioning", "SCIM tokens are valid for 1 year. See \"SAML setup\".",
                    score=0.56)
    linked = [evidence(f"saml#{i}", "SAML setup", f"SAML setup step {i} for tokens.", grade=Grade.INCORRECT,
                       score=0.3) for i in range(12)]
    ranked = rank_evidence(question, [best, *linked], 5)
    assert "scim#0" in [e.chunk_id for e in ranked]
    assert sum(e.source_id == "saml" for e in ranked) <= 4


@pytest.mark.parametrize("question", [
    "Grace Krilanovich's first novel was published by a house that was founded in 2005, and is based where?",
    "Jon L. Luther was the chairman of a restaurant holding company headquartered in what city?",
    "What river flows through the city Kevin Durant played for before Golden State?",
    "What character comes from the same book as Abraham Van Helsing?",
    "How to Eat, released in which year, is a book of English cuisine by Nigella Lawson",
])
def test_descriptions_to_resolve_first_route_as_multi_hop(question: str) -> None:
    assert route_question(question).route is Route.MULTI_HOP


@pytest.mark.parametrize("question", [
    "What is the API rate limit on the Business plan?",
    "How long are SCIM tokens valid?",
    "Which carriers can Starter accounts use?",
])
def test_plain_support_lookups_stay_lookups(question: str) -> None:
    assert route_question(question).route is Route.LOOKUP


def test_a_multi_hop_answer_leads_with_the_end_of_the_chain() -> None:
    question = ("Grace Krilanovich's first novel was published by an independent publishing house that was "
                "founded in 2005, and is based where?")
    author = evidence(
        "gk#0",
        "Grace Krilanovich",
        "Grace Krilanovich is an American author. Her first novel, "
        '"The Orange Eats Creeps", was published by Two Dollar Radio in 2010.',
    )
    house = evidence(
        "tdr#0",
        "Two Dollar Radio",
        "Two Dollar Radio is an independent publishing house based in "
        "Columbus, Ohio. It was founded in 2005.",
        grade=Grade.AMBIGUOUS,
        score=0.4,
    )
    answer = synthesize_answer(question, HOP, [author, house])
    assert "Columbus, Ohio" in _first(answer.text)
