"""Token budgets (investigation and tenant, in Redis) and the fleet-wide rate limiter per API key."""

from __future__ import annotations

import time

import pytest
import redis

from adapters.llm.claude_budget import RedisTokenBudget
from investigation.errors import BudgetExceeded
from storage.rate_limit import RateLimited, TokenBucketLimiter, key_id
from storage.redis_state import RedisState
from tests.fakes.messages_api import FakeMessagesAPI, Tool
from tests.fakes.messages_brain import claude_against

QUESTION = "Which plan includes SCIM provisioning?"
ROUTE = Tool({"route": "lookup", "reason": "one fact", "confidence": 0.9})



def _budget(
    state: RedisState, inv: str = "inv1", *, max_tokens: int = 60_000, daily: int = 0
) -> RedisTokenBudget:
    state.init_budget(inv, max_hops=3, max_retrieval_calls=10, max_llm_tokens=max_tokens,
                      deadline_ts=time.time() + 60)
    return RedisTokenBudget(state, inv, "tenant1", daily)


def test_every_call_is_charged_to_the_investigation_and_the_tenant(messages_api: FakeMessagesAPI,
                                                                   redis_state: RedisState) -> None:
    messages_api.script(ROUTE)
    r = claude_against(messages_api.url).bind(budget=_budget(redis_state, daily=1_000_000))
    r.route(QUESTION)
    (record,) = r.take_usage()
    billed = record.input_total + record.output_tokens
    assert billed > 0
    assert redis_state.usage("inv1")["llm_tokens"] == billed
    assert redis_state.tenant_tokens_used("tenant1") == billed


def test_an_exhausted_investigation_budget_stops_before_the_next_call(messages_api: FakeMessagesAPI,
                                                                       redis_state: RedisState) -> None:
    messages_api.script(ROUTE, ROUTE)
    budget = _budget(redis_state, max_tokens=1000)
    r = claude_against(messages_api.url).bind(budget=budget)
    r.route(QUESTION)  # allowed (estimate fits), then charged past the limit: the counter is filled
    assert redis_state.usage("inv1")["llm_tokens"] == 1000
    r.route(QUESTION)
    assert len(messages_api.requests) == 1
    stop = r.take_usage()[-1]
    assert stop.fallback is True and stop.reason == "token_budget"
    # the stop is remembered for the whole investigation: another worker's reasoner does not call either
    other = claude_against(messages_api.url).bind(budget=RedisTokenBudget(redis_state, "inv1", "tenant1", 0))
    other.route(QUESTION)
    assert len(messages_api.requests) == 1 and other.take_usage()[0].reason == "token_budget"


def test_the_tenant_daily_budget_is_shared_by_its_investigations(messages_api: FakeMessagesAPI,
                                                                 redis_state: RedisState) -> None:
    messages_api.script(ROUTE)
    first = claude_against(messages_api.url).bind(budget=_budget(redis_state, "a", daily=1200))
    first.route(QUESTION)
    second = claude_against(messages_api.url).bind(budget=_budget(redis_state, "b", daily=1200))
    second.route(QUESTION)
    assert len(messages_api.requests) == 1
    assert second.take_usage()[0].reason == "token_budget"
    with pytest.raises(BudgetExceeded):
        RedisTokenBudget(redis_state, "c", "tenant1", 1200).check(500)


def test_without_a_fallback_an_exhausted_budget_raises(
    messages_api: FakeMessagesAPI, redis_state: RedisState
) -> None:
    r = claude_against(messages_api.url, fallback_mode="none").bind(
        budget=_budget(redis_state, max_tokens=10)
    )
    with pytest.raises(BudgetExceeded):
        r.route(QUESTION)
    assert messages_api.requests == []


def test_the_limiter_is_shared_by_every_worker_of_a_key(redis_client: redis.Redis, redis_prefix: str) -> None:
    per_minute = {"requests": 120, "input_tokens": 6000}
    worker_a = TokenBucketLimiter(redis_client, redis_prefix)
    worker_b = TokenBucketLimiter(redis_client, redis_prefix)
    key = key_id("sk-ant-secret")
    assert worker_a.try_acquire(key, {"requests": 1, "input_tokens": 5000}, per_minute) == 0
    wait = worker_b.try_acquire(key, {"requests": 1, "input_tokens": 5000}, per_minute)
    assert 30 < wait <= 41  # 4000 more tokens at 100 tokens/s
    # nothing was taken by the refused call: a small one still fits
    assert worker_b.try_acquire(key, {"requests": 1, "input_tokens": 900}, per_minute) == 0
    keys = list(redis_client.scan_iter(match=f"{redis_prefix}:ratelimit:*"))
    assert keys and all("sk-ant-secret" not in k for k in keys)


def test_the_limiter_waits_and_gives_up_when_told(redis_client: redis.Redis, redis_prefix: str) -> None:
    now = [1_000.0]  # an injected clock: time moves only when the limiter sleeps
    limiter = TokenBucketLimiter(redis_client, redis_prefix, clock=lambda: now[0])
    per_minute = {"requests": 600}  # 10 per second
    for _ in range(600):
        assert limiter.try_acquire("k", {"requests": 1}, per_minute) == 0
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    waited = limiter.acquire("k", {"requests": 1}, per_minute, max_wait=1.0, sleep=sleep)
    assert slept == [pytest.approx(0.1)] and waited == pytest.approx(0.1)
    limiter.debit("k", "requests", 1000, 600)  # usage learnt afterwards drives the bucket negative
    with pytest.raises(RateLimited):
        limiter.acquire("k", {"requests": 1}, per_minute, max_wait=1.0, sleep=lambda s: None)
    assert limiter.try_acquire("k", {"requests": 1}, {"requests": 0}) == 0  # 0 = unlimited
