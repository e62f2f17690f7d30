"""Tenant label cardinality is capped (per deployment through Redis, else per process)."""

from __future__ import annotations

import pytest
import redis

from observability.metrics import OTHER_TENANT, TenantLabels

pytestmark = pytest.mark.integration


def test_local_cap_keeps_the_first_tenants_and_folds_the_rest() -> None:
    labels = TenantLabels(2)
    assert [labels("a"), labels("b"), labels("c"), labels("a"), labels("d")] == ["a", "b", OTHER_TENANT, "a",
                                                                                 OTHER_TENANT]
    assert labels(None) == "none"
    assert TenantLabels(0)("a") == OTHER_TENANT


def test_redis_cap_is_shared_by_processes(redis_client: redis.Redis, redis_prefix: str) -> None:
    key = f"{redis_prefix}:metrics:tenants"
    first = TenantLabels(2, lambda: redis_client, key)
    second = TenantLabels(2, lambda: redis_client, key)  # another process, same Redis
    assert first("a") == "a" and second("b") == "b"
    assert first("c") == OTHER_TENANT and second("c") == OTHER_TENANT
    assert second("a") == "a"
    assert redis_client.scard(key) == 2
