"""The heuristic provider with the real MiniLM embedder: routing, grading, bridging, refusal."""

from __future__ import annotations

import inspect

import pytest

from adapters.llm.heuristic import HeuristicReasoner
from adapters.search.embedder import MiniLMEmbedder
from investigation.fusion import RankedList, rrf
from investigation.ports import Reasoner
from investigation.state import Grade, Passage, Route, RouteDecision, Usage

pytestmark = pytest.mark.unit

EMBEDDER = MiniLMEmbedder(cache_dir=None, max_tokens=128)
REASONER = HeuristicReasoner(EMBEDDER)


def hit(chunk_id: str, title: str, text: str, rank: int = 1) -> Passage:
    return Passage(chunk_id=chunk_id, source_id=chunk_id.split("#")[0], title=title, text=text, score=1.0,
                   engine="bm25", rank=rank)


def test_it_implements_every_reasoner_method_with_the_same_signature() -> None:
    for name, member in inspect.getmembers(Reasoner, inspect.isfunction):
        if name.startswith("_"):
            continue
        ours = getattr(HeuristicReasoner, name)
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(member).parameters), name
    assert REASONER.name == "heuristic" and REASONER.usage == Usage()


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
    question = "Which university did the author of Alexander and the Terrible, Horrible, No Good, Very Bad Day attend?"
    fused = rrf([RankedList(question, [
        hit("alex#0", "Alexander and the Terrible, Horrible, No Good, Very Bad Day",
            "Alexander and the Terrible, Horrible, No Good, Very Bad Day is a 1972 children's book by Judith "
            "Viorst.", 1),
        hit("tea#0", "Green tea", "Green tea is a type of tea made from Camellia sinensis leaves.", 2),
    ])])
    graded = REASONER.grade(question, fused.passages, 1, fused.query_of)
    assert graded[0].grade is Grade.CORRECT and graded[1].grade is Grade.INCORRECT
    nxt = REASONER.next_queries(question, REASONER.plan(question, REASONER.route(question)), graded, [question])
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
