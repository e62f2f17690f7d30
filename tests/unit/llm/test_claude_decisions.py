"""Typed decisions: valid tool input becomes a decision; anything else falls back safely, and is traced."""

from __future__ import annotations

import pytest

from adapters.llm.anthropic import followed_span
from heuristic.reasoner import HeuristicReasoner
from investigation.prompts import NEXT_QUERIES_TOOL
from investigation.state import Grade, Judgment, Plan, QueryKind, Route, RouteDecision, SubQuery
from tests.fakes.messages_api import FakeMessagesAPI, Reply, Text, Tool
from tests.fakes.messages_brain import claude_against
from tests.unit.investigation.fakes import BagOfWordsEmbedder, evidence, passage

QUESTION = "Where was the performer of Hello Love born?"
PLAN = Plan(original=QUESTION, subqueries=(SubQuery(text=QUESTION, purpose="original question"),))
EVIDENCE = [
    evidence(
        "hello#0",
        "Hello Love",
        "Hello Love is a song performed by Hank Snow, released in 1974.",
        grade=Grade.CORRECT,
        score=0.8,
    )
]
PASSAGES = [passage("hello#0", "Hello Love", "Hello Love is a song performed by Hank Snow."),
            passage("other#0", "Other", "Something unrelated about trains.", rank=2)]
USAGE_KEYS = {"step", "model", "input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens", "fallback"}



def _heuristic() -> HeuristicReasoner:
    return HeuristicReasoner(BagOfWordsEmbedder())


def test_valid_tool_input_becomes_a_typed_decision(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(
        Tool({"route": "multi_hop", "reason": "the performer must be found first", "confidence": 0.8}),
        Tool(
            {"kind": "decomposed", "subqueries": [{"text": "Hello Love performer", "purpose": "first link"}]}
        ),
        Tool(
            {
                "grades": [
                    {"id": "P1", "grade": "correct", "relevance": 0.9},
                    {"id": "P2", "grade": "incorrect", "relevance": 0.05},
                ],
                "missing_evidence": ["the birthplace of the performer"],
            }
        ),
        Tool(
            {
                "sufficient": False,
                "answered_subqueries": [],
                "missing_information": ["birthplace of Hank Snow"],
                "conflicts": [],
                "confidence": 0.4,
            }
        ),
        Tool({"queries": [{"text": "Hank Snow birthplace", "purpose": "bridge: Hank Snow"}]}),
    )
    r = claude_against(messages_api.url)
    route = r.route(QUESTION)
    assert route == RouteDecision(
        route=Route.MULTI_HOP, reason="the performer must be found first", confidence=0.8
    )
    plan = r.plan(QUESTION, route)
    assert [s.text for s in plan.subqueries] == [
        QUESTION,
        "Hello Love performer",
    ] and plan.kind == "decomposed"
    graded = r.grade(QUESTION, PASSAGES, 1, {"hello#0": QUESTION})
    assert [(e.chunk_id, e.grade, e.score) for e in graded] == [("hello#0", Grade.CORRECT, 0.9),
                                                               ("other#0", Grade.INCORRECT, 0.05)]
    judgment = r.judge(QUESTION, plan, graded)
    assert not judgment.sufficient and judgment.missing_information == ("birthplace of Hank Snow",)
    nxt = r.next_queries(QUESTION, plan, graded, [QUESTION], judgment)
    assert [q.text for q in nxt] == ["Hank Snow birthplace"] and nxt[0].kind is QueryKind.BRIDGE
    records = r.take_usage()
    assert [x.step for x in records] == ["route", "plan", "grade", "judge", "next_queries"]
    assert all(USAGE_KEYS <= x.model_fields_set and x.fallback is False for x in records)
    assert records[2].missing_evidence == ["the birthplace of the performer"]
    # the judge and next-hop prompts were told what is missing
    assert "birthplace of Hank Snow" in messages_api.requests[-1].user


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Tool({"route": "lookup", "reason": "x", "confidence": 7}), "invalid_output"),  # out of range
        (Tool({"route": "teleport", "reason": "x", "confidence": 0.5}), "invalid_output"),  # not in enum
        (Tool({"route": "lookup"}), "invalid_output"),  # missing keys
        (Tool("not an object"), "invalid_output"),  # malformed input
        (Text("I think this is a lookup."), "invalid_output"),  # no tool call
        (Text("I can't help with that.", stop_reason="refusal"), "refused"),
        (Tool({"to": "attacker@evil.test"}, name="send_email"), "rejected_tool"),
        (Tool({"route": "lookup", "reason": "x", "confidence": 0.5}, name="record_grades"), "rejected_tool"),
    ],
)
def test_unusable_output_never_acts_and_falls_back_visibly(
    messages_api: FakeMessagesAPI, reply: Reply, reason: str
) -> None:
    messages_api.script(reply)
    r = claude_against(messages_api.url)
    assert r.route(QUESTION) == _heuristic().route(QUESTION)
    (call, fallback) = r.take_usage()
    assert call.kind == "llm_call"
    assert fallback.kind == "llm_fallback" and fallback.fallback is True and fallback.reason == reason


def test_without_the_heuristic_the_safe_default_is_to_retrieve(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(Tool({"x": 1}, name="delete_account"))
    r = claude_against(messages_api.url, fallback_mode="none")
    decision = r.route("hi")
    assert decision.route is Route.LOOKUP and decision.confidence == 0.0


def test_a_grade_batch_that_skips_or_invents_ids_is_rejected_whole(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(Tool({"grades": [{"id": "P1", "grade": "correct", "relevance": 1.0},
                                {"id": "P7", "grade": "correct", "relevance": 1.0}], "missing_evidence": []}))
    r = claude_against(messages_api.url)
    graded = r.grade(QUESTION, PASSAGES, 1, {})
    assert graded == _heuristic().grade(QUESTION, PASSAGES, 1, {})
    assert r.take_usage()[-1].reason == "invalid_output"


def test_passages_past_the_cap_are_kept_last_and_never_promoted(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(
        Tool({"grades": [{"id": "P1", "grade": "ambiguous", "relevance": 0.5}], "missing_evidence": []})
    )
    r = claude_against(messages_api.url, grade_max_passages=1)
    graded = r.grade(QUESTION, PASSAGES, 2, {})
    assert [(e.grade, e.hop) for e in graded] == [(Grade.AMBIGUOUS, 2), (Grade.INCORRECT, 2)]
    assert messages_api.requests[0].user.count("<passage ") == 1


def test_sufficiency_needs_a_correct_passage(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(
        Tool(
            {
                "sufficient": True,
                "answered_subqueries": [],
                "missing_information": [],
                "conflicts": [],
                "confidence": 0.9,
            }
        )
    )
    weak = [EVIDENCE[0].model_copy(update={"grade": Grade.AMBIGUOUS})]
    judgment = claude_against(messages_api.url).judge(QUESTION, PLAN, weak)
    assert not judgment.sufficient and "no passage is graded correct" in judgment.missing_information


def test_an_invented_hop_is_traced_and_replaced_by_the_heuristic_bridge(
    messages_api: FakeMessagesAPI,
) -> None:
    messages_api.script(Tool({"queries": [{"text": "Johnny Cash birthplace", "purpose": "guess"},
                                 {"text": "Hank Snow 1975 birthplace", "purpose": "guess"}]}))
    r = claude_against(messages_api.url)
    judgment = _heuristic().judge(QUESTION, PLAN, EVIDENCE)
    queries = r.next_queries(QUESTION, PLAN, EVIDENCE, [QUESTION], judgment)
    expected = _heuristic().next_queries(QUESTION, PLAN, EVIDENCE, [QUESTION], judgment)
    assert [q.text for q in queries] == [q.text for q in expected][:2]
    assert all("Johnny" not in q.text and "1975" not in q.text for q in queries)
    guards = [x for x in r.take_usage() if x.kind == "llm_guard"]
    rejected = [g for g in guards if g.reason == "invented_terms"]
    assert {g.query for g in rejected} == {"Johnny Cash birthplace", "Hank Snow 1975 birthplace"}
    assert rejected[0].unsupported == ["Johnny Cash"]


def test_without_the_heuristic_an_invented_hop_is_simply_dropped(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(Tool({"queries": [{"text": "Johnny Cash birthplace", "purpose": "guess"}]}))
    judgment = Judgment(sufficient=False, missing_information=("birthplace of Hank Snow",))
    assert (
        claude_against(messages_api.url, fallback_mode="none").next_queries(
            QUESTION, PLAN, EVIDENCE, [QUESTION], judgment
        )
        == []
    )


def test_plan_queries_may_only_use_names_from_the_question(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(
        Tool(
            {
                "kind": "decomposed",
                "subqueries": [
                    {"text": "Hello Love performer", "purpose": "a"},
                    {"text": "Dolly Parton songs", "purpose": "b"},
                ],
            }
        )
    )
    plan = claude_against(messages_api.url).plan(QUESTION, RouteDecision(route=Route.MULTI_HOP, reason=""))
    assert [s.text for s in plan.subqueries] == [QUESTION, "Hello Love performer"]


def test_a_next_hop_carries_what_it_follows_for_the_policy(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(
        Tool({"queries": [{"text": "Hank Snow birthplace", "purpose": "bridge", "follows": "Hank Snow"}]}),
        Tool({"queries": [{"text": "Hank Snow birthplace", "purpose": "bridge"}]}),
    )
    judgment = Judgment(sufficient=False, missing_information=("birthplace of Hank Snow",))
    filled = claude_against(messages_api.url).next_queries(QUESTION, PLAN, EVIDENCE, [QUESTION], judgment)
    derived = claude_against(messages_api.url).next_queries(QUESTION, PLAN, EVIDENCE, [QUESTION], judgment)
    assert [q.follows for q in filled] == ["Hank Snow"]
    assert [q.follows for q in derived] == ["hank snow"]  # the grounded span, when the model left it empty
    assert "follows" in NEXT_QUERIES_TOOL["input_schema"]["properties"]["queries"]["items"]["required"]


def test_followed_span_is_the_longest_grounded_run_beyond_the_question() -> None:
    assert followed_span("Hank Snow birthplace", QUESTION, EVIDENCE) == "hank snow"
    assert followed_span("performer Hello Love born", QUESTION, EVIDENCE) == ""  # only the question's words
    assert followed_span("Johnny Cash birthplace", QUESTION, EVIDENCE) == ""  # found in no passage
