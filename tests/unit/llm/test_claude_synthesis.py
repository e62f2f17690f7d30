"""Synthesis: cited answers from the strong model, checked citations, one repair, then a visible caveat."""

from __future__ import annotations

from investigation.citations import validate
from investigation.state import Grade, Route, RouteDecision
from tests.fakes.messages_api import FakeMessagesAPI, Text, overloaded
from tests.fakes.messages_brain import claude_against
from tests.unit.investigation.fakes import evidence

QUESTION = "Which plan includes SCIM provisioning?"
LOOKUP = RouteDecision(route=Route.LOOKUP, reason="")
EVIDENCE = [
    evidence("plans#0", "Plans and pricing", "The Business plan includes SCIM provisioning.", score=0.9),
    evidence("sla#0", "Service level agreement", "The Business plan guarantees 99.95 percent uptime.",
             grade=Grade.AMBIGUOUS, score=0.5),
]



def test_a_cited_answer_maps_markers_to_evidence(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(
        Text("The Business plan includes SCIM provisioning [1]. It guarantees 99.95% uptime. [2]")
    )
    answer = claude_against(messages_api.url).synthesize(QUESTION, LOOKUP, EVIDENCE)
    assert answer.text.startswith("The Business plan includes SCIM provisioning [1].")
    assert [(c.marker, c.evidence_id) for c in answer.citations] == [(1, "ev_plans#0"), (2, "ev_sla#0")]
    assert answer.caveat is None and not answer.refused
    assert validate(answer, EVIDENCE) == answer
    (request,) = messages_api.requests
    assert request.body["model"] == "claude-sonnet-5-5" and "tools" not in request.body
    assert '<passage id="1" source="plans"' in request.user and 'grade="ambiguous"' in request.user


def test_a_dangling_marker_gets_one_repair(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(Text("The Business plan includes SCIM provisioning [3]."),
               Text("The Business plan includes SCIM provisioning [1]."))
    events: list[dict[str, object]] = []
    r = claude_against(messages_api.url, on_event=events.append)
    answer = r.synthesize(QUESTION, LOOKUP, EVIDENCE)
    assert answer.text == "The Business plan includes SCIM provisioning [1]." and answer.caveat is None
    assert len(messages_api.requests) == 2
    repair = messages_api.requests[1].user
    assert "<draft>" in repair and "[3] names no passage" in repair
    assert [x.repair for x in r.take_usage()] == [None, True]
    assert {"type": "token_reset", "reason": "citation repair"} in events


def test_a_failed_repair_ends_in_a_visible_caveat_never_a_wrong_citation(
    messages_api: FakeMessagesAPI,
) -> None:
    bad = (
        "The Business plan includes SCIM provisioning [1]. Every plan also includes free training sessions.\n"
        "Uptime is guaranteed [9]."
    )
    messages_api.script(Text(bad), Text(bad))
    answer = claude_against(messages_api.url).synthesize(QUESTION, LOOKUP, EVIDENCE)
    assert answer.text == "The Business plan includes SCIM provisioning [1]."
    assert answer.caveat and "2 sentence(s) without a valid citation removed" in answer.caveat
    assert [c.evidence_id for c in answer.citations] == ["ev_plans#0"]
    assert len(messages_api.requests) == 2  # exactly one repair attempt


def test_nothing_valid_left_falls_back_to_the_extractive_answer_marked_as_such(
    messages_api: FakeMessagesAPI,
) -> None:
    messages_api.script(
        Text("Trust me, it is the Enterprise plan."), Text("Trust me, it is the Enterprise plan.")
    )
    answer = claude_against(messages_api.url).synthesize(QUESTION, LOOKUP, EVIDENCE)
    assert answer.citations and "Enterprise" not in answer.text
    assert answer.caveat and "without the LLM" in answer.caveat


def test_refusal_is_a_first_class_outcome(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(Text("NOT_IN_KNOWLEDGE_BASE: no passage names a plan with SCIM."))
    answer = claude_against(messages_api.url).synthesize(QUESTION, LOOKUP, EVIDENCE)
    assert answer.refused and answer.caveat == "no passage names a plan with SCIM." and not answer.citations


def test_no_supporting_evidence_refuses_without_a_call(messages_api: FakeMessagesAPI) -> None:
    weak = [e.model_copy(update={"grade": Grade.INCORRECT}) for e in EVIDENCE]
    answer = claude_against(messages_api.url).synthesize(QUESTION, LOOKUP, weak)
    assert answer.refused and messages_api.requests == []
    out_of_corpus = RouteDecision(route=Route.OUT_OF_CORPUS, reason="a poem request")
    assert claude_against(messages_api.url).synthesize("write a poem", out_of_corpus, EVIDENCE).refused
    assert messages_api.requests == []


def test_tokens_stream_in_order_as_they_arrive(messages_api: FakeMessagesAPI) -> None:
    text = "The Business plan includes SCIM provisioning [1]. It guarantees 99.95 percent uptime [2]."
    messages_api.script(Text(text))
    events: list[dict[str, object]] = []
    claude_against(messages_api.url, on_event=events.append).synthesize(QUESTION, LOOKUP, EVIDENCE)
    tokens = [e for e in events if e["type"] == "token"]
    assert len(tokens) == len(text.split()) and "".join(str(e["text"]) for e in tokens) == text
    assert {e["attempt"] for e in tokens} == {1}


def test_an_unavailable_writer_leaves_the_extractive_answer(messages_api: FakeMessagesAPI) -> None:
    messages_api.fail_after(0, overloaded)
    r = claude_against(messages_api.url, retries=1)
    answer = r.synthesize(QUESTION, LOOKUP, EVIDENCE)
    assert answer.citations and answer.caveat and "without the LLM" in answer.caveat
    assert r.take_usage()[-1].reason == "llm_unavailable"
