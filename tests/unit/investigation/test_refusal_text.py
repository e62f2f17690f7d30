"""A refusal says what was searched and the nearest topics, and names nothing its reader may not see."""

from __future__ import annotations

from heuristic.reasoner import HeuristicReasoner
from investigation.answers import REFUSAL, refusal, searched_note, with_searched
from investigation.loop import finish
from investigation.state import Answer, Grade, RetrievalScope, Status, Visibility
from tests.unit.investigation.fakes import BagOfWordsEmbedder, evidence

QUESTION = "What is the boiling point of liquid nitrogen?"
TEA = evidence("tea#0", "Green tea", "Green tea is a type of tea.", grade=Grade.INCORRECT, score=0.2)
RUNBOOK = evidence("rb#0", "Runbook: kettle repairs (internal)", "Kettles boil water at 100 degrees.",
                   grade=Grade.INCORRECT, score=0.3, visibility=Visibility.INTERNAL)


def test_a_refusal_names_the_searches_and_the_nearest_topics() -> None:
    searched = [QUESTION, "liquid nitrogen", "Liquid  nitrogen", "nitrogen boiling"]
    assert searched_note(searched, [TEA, RUNBOOK]) == (
        'Searched for: "What is the boiling point of liquid nitrogen?"; "liquid nitrogen"; '
        '"nitrogen boiling". Nearest topics found: "Runbook: kettle repairs (internal)"; "Green tea".')
    assert searched_note([QUESTION], []) == f'Searched for: "{QUESTION}". Nothing related was found.'
    assert searched_note([], [TEA]) == "Nothing was searched."
    many = searched_note(["red tea", "green tea", "black tea", "white tea", "yellow tea", "blue tea"], [])
    assert '"white tea" (and 2 more).' in many and "yellow" not in many


def test_only_a_refusal_is_extended() -> None:
    answered = Answer(text="Tea is green [1].")
    assert with_searched(answered, [QUESTION], [TEA]) is answered
    refused = with_searched(refusal("the knowledge base does not mention nitrogen"), [QUESTION], [TEA])
    assert refused.text.startswith(REFUSAL) and '"Green tea"' in refused.text
    assert refused.caveat == "the knowledge base does not mention nitrogen"


def test_a_customer_refusal_names_no_internal_document() -> None:
    reasoner = HeuristicReasoner(BagOfWordsEmbedder())
    scope = RetrievalScope.of("customer")
    final = finish(reasoner, question=QUESTION, route=reasoner.route(QUESTION), evidence=[TEA, RUNBOOK], k=10,
                   token_budget=1500, scope=scope, searched=[QUESTION, "nitrogen"])
    assert final.status is Status.REFUSED
    assert '"nitrogen"' in final.answer.text and '"Green tea"' in final.answer.text
    assert "Runbook" not in final.answer.text and "internal" not in final.answer.text
    agent = finish(reasoner, question=QUESTION, route=reasoner.route(QUESTION), evidence=[TEA, RUNBOOK], k=10,
                   token_budget=1500, scope=RetrievalScope.of("agent"), searched=[QUESTION])
    assert "Runbook: kettle repairs (internal)" in agent.answer.text
