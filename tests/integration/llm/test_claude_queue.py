"""Whole investigations with SLEUTH_LLM=anthropic through a real Celery worker, against the local fake
Messages API (the real `anthropic` SDK in the worker talks to 127.0.0.1) — including a run where the API
starts answering 429 mid-investigation, and one where no fallback may finish."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storage import repositories as repo
from storage.redis_state import client_from_url
from tests.fakes.messages_api import FakeMessagesAPI, overloaded, rate_limited
from tests.fakes.messages_brain import HeuristicBrain
from tests.integration.tasks.conftest import Stack, build_stack
from tests.unit.investigation.fakes import BagOfWordsEmbedder

FAST, STRONG = "claude-haiku-5-5", "claude-sonnet-5-5"
LLM = {"llm": "anthropic", "llm_max_retries": 1, "llm_backoff_base": 0.05, "llm_backoff_max": 1.0,
       "llm_timeout": 10.0}


@pytest.fixture(scope="module")
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(HeuristicBrain(BagOfWordsEmbedder())) as server:
        yield server


@pytest.fixture(scope="module")
def claude_stack(tmp_path_factory: pytest.TempPathFactory, redis_url: str, redis_py_url: str,
                 api: FakeMessagesAPI) -> Iterator[Stack]:
    prefix = "t" + uuid.uuid4().hex[:10]
    stack = build_stack(tmp_path_factory.mktemp("claude") / "home", redis_url, prefix,
                        anthropic_base_url=api.url, **LLM)
    try:
        stack.start_worker(ANTHROPIC_API_KEY="sk-test-worker")
        stack.wait_ready()
        yield stack
    finally:
        stack.stop_workers()
        client = client_from_url(redis_py_url)
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start:start + 500])
        client.close()


def _events(stack: Stack, inv_id: str) -> list[Any]:
    with stack.services.session() as session:
        return list(repo.list_events(session, investigation_id=inv_id))


def _listen(stack: Stack, inv_id: str, into: list[dict[str, Any]]) -> threading.Event:
    """Collect what the worker publishes on the investigation's progress channel (synthesis tokens)."""
    pubsub = stack.services.redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(stack.services.state.key("progress", inv_id))
    done = threading.Event()

    def run() -> None:
        while not done.is_set():
            message = pubsub.get_message(timeout=0.1)
            if message and message.get("type") == "message":
                into.append(json.loads(message["data"]))
        pubsub.close()

    threading.Thread(target=run, daemon=True).start()
    return done


def test_an_investigation_is_routed_graded_judged_and_written_by_claude(claude_stack: Stack,
                                                                        api: FakeMessagesAPI) -> None:
    from cli.commands import celery_for
    from tasks import workflow

    first = len(api.requests)
    with claude_stack.services.session() as session:  # created, then launched once we listen for tokens
        tenant = repo.get_tenant_by_name(session, name=claude_stack.tenant_name)
        inv, _ = repo.create_investigation(session, tenant=tenant, question="What does error ERR_4021 mean?",
                                           mode="agentic", callback=None, budget={}, idempotency_key=None,
                                           deadline_seconds=claude_stack.settings.limits.deadline_seconds)
        inv_id = inv.id
    tokens: list[dict[str, Any]] = []
    done = _listen(claude_stack, inv_id, tokens)
    workflow.launch(celery_for(claude_stack.settings), inv_id)
    view: dict[str, Any] = claude_stack.wait(inv_id)
    done.set()
    assert view["status"] == "answered", view
    assert "err-4021" in {c["source_id"] for c in view["citations"]}

    sent = api.requests[first:]
    steps = [r.step for r in sent]
    assert steps[0] == "route" and "grade" in steps and "judge" in steps and steps[-1] == "synthesize", steps
    assert steps.count("grade") == view["hops"]  # one grading call per hop, however many passages
    for r in sent:
        assert r.body["model"] == (STRONG if r.step == "synthesize" else FAST)
        assert r.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert ("tools" in r.body) is (r.step != "synthesize")
    (synthesis,) = [r for r in sent if r.step == "synthesize"]
    assert synthesis.body["stream"] is True and "<retrieved_passages" in synthesis.user
    assert "sk-test-worker" in synthesis.headers.get("authorization", "") + synthesis.headers.get(
        "x-api-key", ""
    )

    # usage: every call is in the trace with its model and tokens, in the totals and in the Redis budget
    calls = [e for e in _events(claude_stack, inv_id) if e.kind == "llm_call"]
    assert [e.data["step"] for e in calls] == steps
    billed_in = sum(r.usage["input_tokens"] + r.usage["cache_read_input_tokens"]
                    + r.usage["cache_creation_input_tokens"] for r in sent)
    billed_out = sum(r.usage["output_tokens"] for r in sent)
    llm = view["llm"]
    assert (llm["input_tokens"], llm["output_tokens"], llm["calls"]) == (billed_in, billed_out, len(sent))
    assert llm["by_step"]["synthesize"]["models"] == [STRONG] and llm["by_step"]["route"]["models"] == [FAST]
    assert claude_stack.services.state.usage(inv_id)["llm_tokens"] == billed_in + billed_out
    # streaming: the worker published the answer's tokens as they arrived
    streamed = "".join(str(t["text"]) for t in tokens if t.get("type") == "token")
    assert "ERR_4021" in streamed


def test_429s_mid_investigation_stop_the_llm_and_the_heuristic_finishes(claude_stack: Stack,
                                                                        api: FakeMessagesAPI) -> None:
    first = len(api.requests)
    api.fail_after(api.ok + 2, lambda: rate_limited(retry_after=0.05))  # route and grading succeed
    try:
        inv_id = claude_stack.ask("What does error ERR_4021 mean?")
        view: dict[str, Any] = claude_stack.wait(inv_id)
    finally:
        api.recover()
    sent = api.requests[first:]
    assert [r.status for r in sent] == [200, 200, 429, 429], [(r.step, r.status) for r in sent]  # bounded
    assert view["status"] == "answered" and view["citations"], view
    assert view["stop_reason"] == "llm_unavailable"
    assert "without the LLM" in str(view["caveat"])
    events = _events(claude_stack, inv_id)
    fallbacks = [e.data for e in events if e.kind == "llm_fallback"]
    assert fallbacks and all(f["reason"] == "llm_unavailable" for f in fallbacks)
    assert {f["step"] for f in fallbacks} >= {"judge", "synthesize"}
    decision = next(e.data for e in events if e.kind == "decision")
    assert decision["reason"] == "llm_unavailable" and "heuristic finishes" in decision["detail"]


def test_without_a_fallback_the_investigation_fails_clearly(tmp_path: Path, redis_url: str, redis_prefix: str,
                                                           api: FakeMessagesAPI) -> None:
    # The same steps in-process (the inline executor): SLEUTH_LLM_FALLBACK=none, the API overloaded.
    from pydantic import SecretStr

    from tasks import inline

    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, anthropic_base_url=api.url,
                        llm_fallback="none", **LLM)
    object.__setattr__(stack.services, "settings", stack.settings.model_copy(
        update={"anthropic_api_key": SecretStr("sk-test-inline")}))
    with stack.services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=stack.tenant_name)
        inv, _ = repo.create_investigation(session, tenant=tenant, question="Which plan includes SCIM?",
                                           mode="agentic", callback=None, budget={}, idempotency_key=None,
                                           deadline_seconds=60)
    api.fail_after(api.ok, overloaded)
    try:
        inline.run(stack.services, inv.id, deliver=False)
    finally:
        api.recover()
    with stack.services.session() as session:
        view = repo.investigation_view(
            session, investigation=repo.get_investigation(session, investigation_id=inv.id)
        )
    assert view["status"] == "failed" and view["stop_reason"] == "llm_unavailable", view
    assert "529" in str(view["error"])
    assert view["llm"]["by_step"]["route"]["fallbacks"] == 1
