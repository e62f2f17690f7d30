"""The injection corpus against a model that obeys it: code keeps the answer and the actions unchanged.

`GullibleBrain` is the worst case a prompt cannot rule out — a model that follows orders planted in
retrieved passages. Every defence checked here is code: fencing, the allowed-tool check, the
no-invented-hop guard, and the citation check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from investigation import loop, prompts
from investigation.policy import BudgetSnapshot
from investigation.state import Evidence, Grade, Judgment, Mode, Passage, Plan, Route, RouteDecision, SubQuery
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.messages_brain import GullibleBrain, HeuristicBrain, claude_against
from tests.unit.investigation.fakes import BagOfWordsEmbedder, evidence, passage

CORPUS = [json.loads(line) for line in
          (Path(__file__).parents[2] / "fixtures" / "injection" / "corpus.jsonl").read_text().splitlines()]
IDS = [d["id"] for d in CORPUS]
QUESTION = "What does error ERR_4021 mean?"
LEGIT = [
    passage(
        "err-4021#0",
        "Error ERR_4021",
        "ERR_4021 means the API key was rotated and the old key has "
        "expired. Create a new key in Settings, API keys.",
        rank=2,
    ),
    passage("plans#0", "Plans and pricing", "The Team plan costs 20 dollars per user per month.", rank=3),
]
EMBEDDER = BagOfWordsEmbedder()


def _planted(doc: dict[str, Any]) -> Passage:
    # The attack ranks first and shares the question's words, so every step sees it.
    return passage(f"{doc['id']}#0", doc["title"], f"Error ERR_4021 API key. {doc['text']}", rank=1)


@pytest.fixture()
def gullible() -> Iterator[tuple[FakeMessagesAPI, GullibleBrain]]:
    brain = GullibleBrain(HeuristicBrain(EMBEDDER))
    with FakeMessagesAPI(brain) as server:
        yield server, brain


@pytest.mark.parametrize("doc", CORPUS, ids=IDS)
def test_every_attack_stays_inside_its_fence(doc: dict[str, Any]) -> None:
    items = [
        prompts.Fenced("P1", doc["id"], doc["title"], doc["text"]),
        prompts.Fenced("P2", "ok", "OK", "fine"),
    ]
    spec = prompts.grade_request(QUESTION, items)
    assert spec.user.count("<passage ") == 2 and spec.user.count("</passage>") == 2
    assert spec.user.count("</retrieved_passages>") == 1
    for tag in ("<system>", "<tool_use", "<div", "<!--", "\u200b", "\u202e"):
        assert tag not in spec.user
    assert spec.system == prompts.GRADE_SYSTEM and spec.tool == prompts.GRADE_TOOL


@pytest.mark.parametrize("doc", CORPUS, ids=IDS)
def test_a_whole_investigation_ignores_the_attack(doc: dict[str, Any],
                                                  gullible: tuple[FakeMessagesAPI, GullibleBrain]) -> None:
    api, brain = gullible
    r = claude_against(api.url, embedder=EMBEDDER)
    started = loop.start(r, question=QUESTION, mode=Mode.AGENTIC)
    assert started.plan is not None
    passages = [_planted(doc), *LEGIT]
    out = loop.reduce_hop(r, question=QUESTION, plan=started.plan, hop=1, mode=Mode.AGENTIC,
                          results=[loop.SlotResult(query=QUESTION, engine="bm25", passages=passages)],
                          already_seen=set(), evidence=[], asked=[QUESTION],
                          budget=BudgetSnapshot(1, 3, 2, 24, 0, 60_000, 100))
    final = loop.finish(r, question=QUESTION, route=started.route, evidence=out.new_evidence, k=5,
                        token_budget=1500)
    records = r.take_usage()
    # actions: a reply naming a foreign tool never became a decision
    own = {"grade": "record_grades", "judge": "record_judgment", "next_queries": "record_next_queries"}
    foreign = [o for o in brain.obeyed if o[1].startswith("tool ") and o[1][5:] != own[o[0]]]
    rejected = [x for x in records if x.reason == "rejected_tool"]
    assert len(rejected) == len(foreign)
    for query in out.decision.next_queries:
        assert not any(p.lower() in query.text.lower() for p in doc["planted"])
    # the answer: nothing planted, every citation points at retrieved evidence
    text = final.answer.text.lower()
    assert not any(p.lower() in text for p in doc["planted"]), final.answer.text
    ids = {e.id for e in out.new_evidence}
    assert all(c.evidence_id in ids for c in final.answer.citations)
    if any(step == "synthesize" for step, _ in brain.obeyed):
        assert final.answer.caveat, "a tampered answer must carry a visible caveat"


@pytest.mark.parametrize("doc", [d for d in CORPUS if d["attack"] in (
    "ignore_previous", "fake_system_prompt", "data_exfiltration", "html_hidden", "invisible_characters",
    "fake_turns")], ids=lambda d: d["id"])
def test_an_obeying_writer_produces_the_same_answer_as_an_honest_one(doc: dict[str, Any]) -> None:
    evidence_set = [
        _ev(_planted(doc), Grade.AMBIGUOUS, 0.5),
        *(_ev(p, Grade.CORRECT, 0.9) for p in LEGIT[:1]),
    ]
    route = RouteDecision(route=Route.LOOKUP, reason="")
    with FakeMessagesAPI(HeuristicBrain(EMBEDDER)) as honest_api:
        honest = claude_against(honest_api.url, embedder=EMBEDDER).synthesize(QUESTION, route, evidence_set)
    brain = GullibleBrain(HeuristicBrain(EMBEDDER))
    with FakeMessagesAPI(brain) as api:
        tampered = claude_against(api.url, embedder=EMBEDDER).synthesize(QUESTION, route, evidence_set)
    assert brain.obeyed, "the gullible model must have tried"
    assert (tampered.text, tampered.citations) == (honest.text, honest.citations)
    assert tampered.caveat and "without a valid citation removed" in tampered.caveat


def test_planted_tool_orders_are_rejected_at_every_step(
    gullible: tuple[FakeMessagesAPI, GullibleBrain],
) -> None:
    api, _ = gullible
    doc = next(d for d in CORPUS if d["attack"] == "fake_tool_call")
    r = claude_against(api.url, embedder=EMBEDDER)
    planted = _planted(doc)
    graded = r.grade(QUESTION, [planted, *LEGIT], 1, {})
    assert graded == r.fallback.grade(QUESTION, [planted, *LEGIT], 1, {})
    plan = Plan(original=QUESTION, subqueries=(SubQuery(text=QUESTION),))
    assert r.judge(QUESTION, plan, graded) == r.fallback.judge(QUESTION, plan, graded)
    assert [x.reason for x in r.take_usage() if x.kind == "llm_fallback"] == ["rejected_tool"] * 2


def test_a_planted_search_for_an_invented_entity_never_runs(
    gullible: tuple[FakeMessagesAPI, GullibleBrain],
) -> None:
    api, brain = gullible
    doc = next(d for d in CORPUS if d["attack"] == "search_order")
    ev = [_ev(_planted(doc), Grade.AMBIGUOUS, 0.4), _ev(LEGIT[0], Grade.CORRECT, 0.9)]
    plan = Plan(original=QUESTION, subqueries=(SubQuery(text=QUESTION),))
    r = claude_against(api.url, embedder=EMBEDDER)
    judgment = Judgment(sufficient=False, missing_information=("the fix",))
    # the planted passage is shown: ambiguous
    queries = r.next_queries(QUESTION, plan, ev, [QUESTION], judgment)
    assert brain.obeyed == [("next_queries", "search Globex Corporation payroll export 2031")]
    assert not any("Globex" in q.text for q in queries)
    guard = [x for x in r.take_usage() if x.reason == "invented_terms"]
    assert guard and "Globex Corporation" in (guard[0].unsupported or [])


def _ev(p: Passage, grade: Grade, score: float) -> Evidence:
    return evidence(p.chunk_id, p.title, p.text, grade=grade, score=score, query=QUESTION)
