"""Tenant label cardinality is capped per deployment through Redis (tests/unit/observability: per process)."""

from __future__ import annotations

import redis

from observability.metrics import OTHER_TENANT, TenantLabels


def test_redis_cap_is_shared_by_processes(redis_client: redis.Redis, redis_prefix: str) -> None:
    key = f"{redis_prefix}:metrics:tenants"
    first = TenantLabels(2, lambda: redis_client, key)
    second = TenantLabels(2, lambda: redis_client, key)  # another process, same Redis
    assert first("a") == "a" and second("b") == "b"
    assert first("c") == OTHER_TENANT and second("c") == OTHER_TENANT
    assert second("a") == "a"
    assert redis_client.scard(key) == 2
