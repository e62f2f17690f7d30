"""The tools' Redis state: a tenant-keyed cache and a circuit breaker driven by an injected clock."""

from __future__ import annotations

import redis

from storage.tool_state import BreakerConfig, CachedResult, ToolState


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def state(client: redis.Redis, prefix: str, clock: Clock) -> ToolState:
    return ToolState(client, prefix, breaker=BreakerConfig(threshold=3, window=60, cooldown=30), clock=clock)


def test_cache_is_keyed_by_tenant_revision_arguments_audience_and_requester(redis_client: redis.Redis,
                                                                            redis_prefix: str) -> None:
    tools = state(redis_client, redis_prefix, Clock())
    digest = ToolState.digest("rev1", {"account_id": "acct-42"}, "customer", "dana")
    tools.cache_set("tenant-a", "billing", digest, {"plan": "Business"}, ttl=60, fetched_at=1_000.0)
    assert tools.cache_get("tenant-a", "billing", digest) == CachedResult({"plan": "Business"}, 1_000.0)
    assert tools.cache_get("tenant-b", "billing", digest) is None
    assert digest != ToolState.digest("rev2", {"account_id": "acct-42"}, "customer", "dana")
    assert digest != ToolState.digest("rev1", {"account_id": "acct-7"}, "customer", "dana")
    assert digest != ToolState.digest("rev1", {"account_id": "acct-42"}, "agent", "dana")
    assert digest != ToolState.digest("rev1", {"account_id": "acct-42"}, "customer", "lee")
    tools.cache_set("tenant-a", "billing", "zero", {"x": 1}, ttl=0, fetched_at=1_000.0)
    assert not tools.cached("tenant-a", "billing", "zero")


def test_an_entry_of_another_format_is_a_miss(redis_client: redis.Redis, redis_prefix: str) -> None:
    tools = state(redis_client, redis_prefix, Clock())
    redis_client.set(tools._key("tenant-a", "billing", "cache", "old"), '{"plan": "Business"}')
    assert tools.cache_get("tenant-a", "billing", "old") is None


def test_breaker_opens_after_repeated_failures_then_half_opens(redis_client: redis.Redis,
                                                               redis_prefix: str) -> None:
    clock = Clock()
    tools = state(redis_client, redis_prefix, clock)
    for _ in range(2):
        assert tools.allow("t", "billing")
        assert tools.record("t", "billing", ok=False) == "closed"
    assert tools.record("t", "billing", ok=False) == "open"
    assert not tools.allow("t", "billing") and tools.breaker_state("t", "billing") == "open"
    assert tools.allow("t", "other")  # per tool
    assert tools.allow("u", "billing")  # per tenant
    clock.now += 31
    assert tools.breaker_state("t", "billing") == "half_open"
    assert tools.allow("t", "billing")  # the one trial
    assert not tools.allow("t", "billing")  # nobody else while it runs
    assert tools.record("t", "billing", ok=False) == "open"  # the trial failed: open again
    assert not tools.allow("t", "billing")
    clock.now += 31
    assert tools.allow("t", "billing")
    assert tools.record("t", "billing", ok=True) == "closed"
    assert tools.allow("t", "billing") and tools.allow("t", "billing")
