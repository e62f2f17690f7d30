"""The heuristic provider with the real MiniLM embedder: routing, grading, bridging, refusal."""

from __future__ import annotations

import inspect

import pytest

from adapters.llm.heuristic import heuristic_reasoner
from adapters.search.embedder import MiniLMEmbedder
from heuristic.reasoner import HeuristicReasoner
from investigation.fusion import RankedList, rrf
from investigation.ports import Reasoner
from investigation.state import Grade, Passage, QueryKind, Route, RouteDecision

EMBEDDER = MiniLMEmbedder(cache_dir=None, max_tokens=128)
REASONER = heuristic_reasoner(EMBEDDER)


def hit(chunk_id: str, title: str, text: str, rank: int = 1) -> Passage:
    return Passage(chunk_id=chunk_id, source_id=chunk_id.split("#")[0], title=title, text=text, score=1.0,
                   engine="bm25", rank=rank)


def test_it_implements_every_reasoner_method_with_the_same_signature() -> None:
    for name, member in inspect.getmembers(Reasoner, inspect.isfunction):
        if name.startswith("_"):
            continue
        ours = getattr(HeuristicReasoner, name)
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(member).parameters), name
    assert REASONER.name == "heuristic"


@pytest.mark.parametrize("text", ["hey there, how's your day going?", "thanks so much!", "good evening"])
def test_chit_chat_is_direct_with_a_friendly_reply(text: str) -> None:
    route = REASONER.route(text)
    assert route.route is Route.DIRECT
    answer = REASONER.synthesize(text, route, [])
    assert answer.text and not answer.citations and not answer.refused


def test_questions_are_routed_by_shape() -> None:
    assert REASONER.route("Are Medici and Senet both board games?").route is Route.MULTI_PART
    assert REASONER.route("Who directed the film that was shot in Leland in 1986?").route is Route.MULTI_HOP
    assert REASONER.route("How do I reset my password?").route is Route.LOOKUP


def test_real_embeddings_grade_relevant_passages_above_irrelevant_ones() -> None:
    question = ("Which university did the author of Alexander and the Terrible, Horrible, No Good, "
                "Very Bad Day attend?")
    fused = rrf([RankedList(question, [
        hit("alex#0", "Alexander and the Terrible, Horrible, No Good, Very Bad Day",
            "Alexander and the Terrible, Horrible, No Good, Very Bad Day is a 1972 children's book by Judith "
            "Viorst.", 1),
        hit("tea#0", "Green tea", "Green tea is a type of tea made from Camellia sinensis leaves.", 2),
    ])])
    graded = REASONER.grade(question, fused.passages, 1, fused.query_of)
    assert graded[0].grade is Grade.CORRECT and graded[1].grade is Grade.INCORRECT
    plan = REASONER.plan(question, REASONER.route(question))
    nxt = REASONER.next_queries(question, plan, graded, [question], REASONER.judge(question, plan, graded))
    assert nxt and nxt[0].text.startswith("Judith Viorst")


def test_out_of_corpus_evidence_is_refused() -> None:
    question = "What is the boiling point of liquid nitrogen at sea level?"
    fused = rrf([RankedList(question, [
        hit("b#0", "Bangor, Maine", "Bangor is a city in the U.S. state of Maine, on the Penobscot River."),
        hit("k#0", "Stephen King", "Stephen King is an American author of horror novels."),
    ])])
    graded = REASONER.grade(question, fused.passages, 1, fused.query_of)
    assert all(e.grade is Grade.INCORRECT for e in graded)
    answer = REASONER.synthesize(question, RouteDecision(route=Route.LOOKUP, reason="t"), graded)
    assert answer.refused and "not in the knowledge base" in answer.text


def test_a_mixed_greeting_and_thanks_is_answered_directly() -> None:
    route = REASONER.route("Hi there, thanks for the help yesterday!")
    assert route.route is Route.DIRECT
    assert REASONER.synthesize("Hi there, thanks for the help yesterday!", route, []).text.startswith(
        "You're welcome"
    )


def test_an_on_topic_question_about_something_the_kb_never_mentions_is_refused() -> None:
    """In a one-product knowledge base everything is similar; the absent name decides."""
    question = "Do you provide a Kubernetes operator or Helm chart for running Acme Cloud on-premise?"
    fused = rrf(
        [
            RankedList(
                question,
                [
                    hit(
                        "deploy#0",
                        "Getting started with Acme Cloud",
                        "Acme Cloud runs flows in the cloud regions US-1 and "
                        "EU-1. Operators of a workspace can deploy flows from the dashboard or the REST API.",
                        1,
                    ),
                    hit(
                        "keys#0",
                        "Managing API keys",
                        "API keys authenticate requests to the Acme Cloud REST API and are "
                        "used by CI pipelines, scripts and third-party tools.",
                        2,
                    ),
                ],
            )
        ]
    )
    graded = REASONER.grade(question, fused.passages, 1, fused.query_of)
    plan = REASONER.plan(question, REASONER.route(question))
    nxt = REASONER.next_queries(question, plan, graded, [question], REASONER.judge(question, plan, graded))
    assert nxt and nxt[0].kind is QueryKind.PROBE and "Kubernetes" in nxt[0].text
    answer = REASONER.synthesize(question, RouteDecision(route=Route.LOOKUP, reason="t"), graded)
    assert answer.refused and "Kubernetes" in (answer.caveat or "")


def test_a_markdown_table_answer_is_a_clean_cited_sentence() -> None:
    question = "What is the API rate limit on the Business plan?"
    fused = rrf([RankedList(question, [hit("rate-limits#0", "API rate limits", (
        "## REST API limits per plan\n\n| Plan | Requests per minute per workspace | |---|---| | Free | 60 | "
        "| Team | 300 | | Business | 1,200 | | Enterprise | 3,000 |"), 1)])])
    graded = REASONER.grade(question, fused.passages, 1, fused.query_of)
    answer = REASONER.synthesize(question, RouteDecision(route=Route.LOOKUP, reason="t"), graded)
    assert "Business: 1,200 requests per minute per workspace [1]." in answer.text
    assert "|" not in answer.text and "#" not in answer.text


def test_a_ticket_from_a_town_is_answered_by_its_regions_rule() -> None:
    question = ("An employee at our San Diego store is leaving with 6 vacation days unused. Do we have to "
                "pay those out?")
    fused = rrf([RankedList(question, [
        hit("bank#0", "Bank accounts", "A bank account that is not verified is left out of the pay run "
            "until it is verified.", 1),
        hit("leave#0", "Time off and leave", "Leave accrues per pay run. Unused leave is paid out at the "
            "end of employment in the UK and Australia; in the US it depends on the state, and California "
            "always pays it out.", 2),
    ])])
    graded = REASONER.grade(question, fused.passages, 1, fused.query_of)
    answer = REASONER.synthesize(question, RouteDecision(route=Route.LOOKUP, reason="t"), graded)
    assert "California always pays it out" in answer.text.split(". ")[0]
