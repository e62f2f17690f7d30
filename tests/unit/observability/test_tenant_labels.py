"""Tenant label cardinality is capped per process (tests/integration/observability: through Redis)."""

from __future__ import annotations

from observability.metrics import OTHER_TENANT, TenantLabels


def test_local_cap_keeps_the_first_tenants_and_folds_the_rest() -> None:
    labels = TenantLabels(2)
    assert [labels("a"), labels("b"), labels("c"), labels("a"), labels("d")] == ["a", "b", OTHER_TENANT, "a",
                                                                                 OTHER_TENANT]
    assert labels(None) == "none"
    assert TenantLabels(0)("a") == OTHER_TENANT
