"""429/529/5xx/timeouts: bounded retries honouring retry-after, then `llm_unavailable` and the fallback."""

from __future__ import annotations

import pytest

from investigation.errors import LLMUnavailable, PermanentError
from tests.fakes.messages_api import Error, FakeMessagesAPI, Malformed, Slow, Tool, overloaded, rate_limited
from tests.fakes.messages_brain import claude_against

QUESTION = "Which plan includes SCIM provisioning?"
ROUTE = Tool({"route": "lookup", "reason": "one fact", "confidence": 0.9})



class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def test_429_waits_at_least_retry_after_then_succeeds(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(rate_limited(retry_after=0.25), ROUTE)
    sleeps = Sleeps()
    r = claude_against(messages_api.url, sleep=sleeps, backoff=0.5, max_delay=5.0)
    assert r.route(QUESTION).reason == "one fact"
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.75
    (record,) = r.take_usage()
    assert record.attempts == 2 and record.fallback is False
    assert [x.status for x in messages_api.requests] == [429, 200]


def test_529_overloaded_and_500_are_retried_with_growing_backoff(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(overloaded(), Error(500, "api_error"), ROUTE)
    sleeps = Sleeps()
    r = claude_against(messages_api.url, sleep=sleeps, retries=3, backoff=0.1, max_delay=5.0)
    assert r.route(QUESTION).confidence == 0.9
    assert len(sleeps) == 2 and 0.0 <= sleeps[0] <= 0.1 and 0.0 <= sleeps[1] <= 0.2  # full jitter


def test_timeouts_and_malformed_bodies_are_retried(messages_api: FakeMessagesAPI) -> None:
    messages_api.script(Slow(1.5, ROUTE), Malformed(), ROUTE)
    r = claude_against(messages_api.url, timeout=0.4, retries=2)
    assert r.route(QUESTION).reason == "one fact"
    assert r.take_usage()[0].attempts == 3


def test_exhausted_retries_stop_the_llm_and_the_heuristic_finishes(messages_api: FakeMessagesAPI) -> None:
    messages_api.fail_after(0, lambda: rate_limited(retry_after=0.01))
    r = claude_against(messages_api.url, retries=2)
    decision = r.route(QUESTION)
    assert decision == r.fallback.route(QUESTION)
    assert len(messages_api.requests) == 3  # one call, two retries — bounded
    (fallback,) = r.take_usage()
    assert fallback.reason == "llm_unavailable" and fallback.fallback is True
    assert "429" in (fallback.detail or "")
    r.grade(QUESTION, [], 1, {})
    r.judge(QUESTION, r.plan(QUESTION, decision), [])
    assert len(messages_api.requests) == 3  # once out, the LLM is not called again for this investigation


@pytest.mark.parametrize("error", [
    Error(400, "invalid_request_error", "thinking.type.disabled is not supported"),
    Error(401, "authentication_error"),
    Error(429, "rate_limit_error", "spend limit", details={"error_code": "enforced_spend_limit_reached"}),
    rate_limited(retry_after=120),
])
def test_errors_retrying_cannot_fix_are_not_retried(messages_api: FakeMessagesAPI, error: Error) -> None:
    messages_api.script(error)
    sleeps = Sleeps()
    r = claude_against(messages_api.url, sleep=sleeps, retries=3, max_delay=20.0)
    r.route(QUESTION)
    assert len(messages_api.requests) == 1 and sleeps == []
    assert r.take_usage()[0].reason == "llm_unavailable"


def test_without_a_fallback_the_step_fails_with_llm_unavailable(messages_api: FakeMessagesAPI) -> None:
    messages_api.fail_after(0, overloaded)
    r = claude_against(messages_api.url, fallback_mode="none", retries=1)
    with pytest.raises(LLMUnavailable) as caught:
        r.route(QUESTION)
    assert isinstance(caught.value, PermanentError)  # the task must not retry the same calls
    assert r.take_usage()[0].reason == "llm_unavailable"
