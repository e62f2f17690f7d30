"""Decomposition of comparisons, and bridging next-hop queries that never repeat an asked one."""

from __future__ import annotations

import pytest

from heuristic.mentions import clean_name, introduced_terms
from heuristic.planner import bridge_queries, part_queries, plan_question
from heuristic.router import route_question
from investigation.state import Grade, Plan, PlanKind, SubQuery
from investigation.text import query_key
from tests.unit.investigation.fakes import evidence

QUESTION = "Who was in charge of the country where the composer of Aschenbrodel was a citizen?"
ANCHOR = evidence(
    "asch#0",
    "Aschenbrödel",
    "Aschenbrödel is a ballet composed by Johann Strauss II. It premiered "
    "in Berlin in 1901 and was completed by Josef Bayer.",
)


def test_comparison_plan_keeps_the_original_and_one_subquery_per_entity_with_the_property() -> None:
    question = "Are Christopher Nolan and Sathish Kalathil both film directors?"
    plan = plan_question(question, route_question(question))
    assert plan.kind == "decomposed"
    assert [s.text for s in plan.subqueries] == [
        question, "Christopher Nolan film directors", "Sathish Kalathil film directors"]


def test_a_lookup_plan_is_the_question_as_is() -> None:
    question = "When was Ada Lovelace born?"
    plan = plan_question(question, route_question(question))
    assert [s.text for s in plan.subqueries] == [question] and plan.original == question


def test_bridging_names_an_entity_absent_from_the_question_with_the_unresolved_part() -> None:
    queries = bridge_queries(QUESTION, [ANCHOR], [QUESTION])
    assert queries, "a bridge should be proposed"
    first = queries[0].text
    assert first.startswith("Johann Strauss II")
    assert "citizen" in first and "aschenbrodel" not in first.lower()
    assert len(queries) <= 2


def test_bridging_never_repeats_an_asked_query_or_entity() -> None:
    first = bridge_queries(QUESTION, [ANCHOR], [QUESTION])
    asked = [QUESTION, *(q.text for q in first)]
    again = bridge_queries(QUESTION, [ANCHOR], asked)
    asked_keys = {query_key(q) for q in asked}
    assert all(query_key(q.text) not in asked_keys for q in again)
    assert all(not q.text.startswith("Johann Strauss II") for q in again)


def test_bridging_follows_a_retrieved_link_instead_of_asking_for_it_again() -> None:
    strauss = evidence(
        "js#0",
        "Johann Strauss II",
        "Johann Strauss II was an Austrian composer, a citizen of the Austrian Empire.",
        grade=Grade.AMBIGUOUS,
        hop=2,
        query="Johann Strauss II citizen",
    )
    queries = bridge_queries(QUESTION, [ANCHOR, strauss], [QUESTION, "Johann Strauss II citizen"])
    assert all("Johann Strauss II" not in q.text for q in queries)
    assert any("Austrian Empire" in q.text for q in queries)


def test_dates_and_aliases_of_the_subject_are_not_bridges() -> None:
    drew = evidence(
        "drew#0",
        "Drew Fuller",
        'Andrew Alan "Drew" Fuller (born May 19, 1980) is an American actor. '
        'He is best known for the television series "Charmed".',
    )
    queries = bridge_queries("Drew Fuller starred in a series that broadcast on what station?", [drew], [])
    assert queries[0].text.startswith("Charmed")
    assert not any(q.text.startswith(("May 19", "Andrew Alan")) for q in queries)


def test_part_queries_ask_for_missing_compared_entities_once() -> None:
    plan = Plan(
        original="Are A and B both x?",
        subqueries=(SubQuery(text="Are A and B both x?"),),
        kind=PlanKind.DECOMPOSED,
    )
    assert [q.text for q in part_queries(plan, ["entity: Guitar World"], [])] == ["Guitar World"]
    assert part_queries(plan, ["entity: Guitar World"], ["guitar world"]) == []


# -- bridging follows what the evidence introduced, never a bag of the question's own words

TICKET = (
    "A customer's invoice failed with card_declined three times. What happens to their workspace and how "
    "fast does it recover after paying?"
)
BILLING = evidence(
    "billing#0",
    "Failed payments",
    "If a payment fails, Acme Cloud retries it for 14 days. If the "
    "invoice is still unpaid after 14 days, the organization is suspended. Go to Settings to pay. "
    "Payment fails for several reasons (card declined, 3-D Secure not confirmed).",
    grade=Grade.AMBIGUOUS,
    score=0.5,
)


def test_a_ticket_without_names_bridges_through_the_state_its_article_introduces() -> None:
    queries = bridge_queries(TICKET, [BILLING], [TICKET])
    assert queries and queries[0].follows == "suspended"
    assert queries[0].text.startswith("suspended") and queries[0].kind == "bridge"
    for q in queries:  # each follows something the passage says and the question does not
        assert q.follows.lower() in BILLING.text.lower() and q.follows.lower() not in TICKET.lower()


def test_the_query_keeps_the_asked_relation_without_the_asking_words() -> None:
    [query, *_] = bridge_queries(TICKET, [BILLING], [TICKET])
    assert "fast" not in query.text.split() and "happens" not in query.text.split()
    assert "recover" in query.text.split()


@pytest.mark.parametrize(("name", "sentence", "clean"), [
    ("Go to Settings", "Go to Settings to pay.", "Settings"),  # a sentence-opening verb
    ("No. The Free", "No. The Free plan has no SLA.", "Free"),
    ("Billing Admin", "Ask the Billing Admin to pay.", "Billing Admin"),  # mid-sentence: a name as written
])
def test_sentence_openers_are_cut_from_bridge_names(name: str, sentence: str, clean: str) -> None:
    assert clean_name(name, sentence, f"{sentence} You can go to the billing page; the free plan.") == clean


def test_introduced_terms_are_compounds_and_states_the_question_does_not_use() -> None:
    sentence = (
        "After three failed attempts the workspace becomes read-only and the invoice is marked past-due."
    )
    assert introduced_terms(sentence, "What happens to the workspace?") == ["read-only", "past-due", "marked"]
    assert introduced_terms(sentence, "Why is my workspace read-only?") == ["past-due", "marked"]


def test_a_question_about_names_still_bridges_through_names() -> None:
    question = "Who directed the film that was shot in the well-known studio of Cinecitta?"
    passage = evidence("c#0", "Cinecitta", "Cinecitta is a well-known studio in Rome. Its best-selling film "
                       "was Ben-Hur, directed by William Wyler, and it was re-opened in 1950.")
    [query, *_] = bridge_queries(question, [passage], [question])
    assert query.follows in ("Ben-Hur", "William Wyler", "Rome")


def test_an_initial_is_not_a_full_stop() -> None:
    sentence = "The Harris W. Fawell Congressional Papers are held at North Central College."
    assert clean_name("Harris W. Fawell Congressional Papers", sentence, sentence) == \
        "Harris W. Fawell Congressional Papers"


def test_a_ticket_code_bridges_from_the_passage_explaining_it_not_a_title_sharing_an_acronym() -> None:
    question = "Our API calls started failing with GW_5030. How long do we have before our files get deleted?"
    keys = evidence("keys#0", "Managing API keys", (
        "API keys authenticate requests. Revoked keys return GW_5011 (Key revoked or expired)."), score=0.6)
    codes = evidence(
        "codes#0",
        "Error codes",
        (
            "GW_5030 — Account frozen: the account is frozen because an invoice is past due. Members can "
            "still sign in "
            "and export files."
        ),
        grade=Grade.AMBIGUOUS,
        score=0.5,
    )
    [first, *_] = bridge_queries(question, [keys, codes], [question])
    assert "frozen" in first.follows.lower() and "revoked" not in first.text.lower(), first
    # The asking sentence says what the next hop must find, even when the first passages use its words.
    assert "files" in first.text.split() and "deleted" in first.text.split()


def test_a_reached_entity_whose_passage_says_nothing_of_the_asked_relation_is_bridged_to_itself() -> None:
    # "Who did the singer who voiced X have a child with?": the anchor names the singer, the singer's passage
    # (retrieved) names only works; the child's passage names the singer, so the next hop asks for the singer.
    question = 'Who did the singer who voiced Captain Marlo Venn in "Star Harbour" have a child with?'
    reached = evidence("dorne#0", "Ilka Dorne",
                       'Ilka Dorne is a singer who voiced Captain Marlo Venn in "Star Harbour". She also '
                       'recorded the album "Blue Quay" and toured with the Orvell Quartet.', score=0.6)
    queries = bridge_queries(question, [_VENN, reached], [question])
    assert queries[0].text == "Ilka Dorne child" and queries[0].follows == "Ilka Dorne"


def test_a_reached_entity_that_names_the_asked_relation_is_followed_through_that_name() -> None:
    question = 'Where was the singer who voiced Captain Marlo Venn in "Star Harbour" married?'
    reached = evidence("dorne#0", "Ilka Dorne",
                       'Ilka Dorne is a singer who voiced Captain Marlo Venn in "Star Harbour". She married '
                       "Tavo Renning in Port Salla Cathedral.", score=0.6)
    queries = bridge_queries(question, [_VENN, reached], [question])
    assert queries and all(q.follows != "Ilka Dorne" for q in queries)


_VENN = evidence("venn#0", "Marlo Venn",
                 'Marlo Venn is a character in the cartoon "Star Harbour". He is voiced by singer '
                 "Ilka Dorne.")


