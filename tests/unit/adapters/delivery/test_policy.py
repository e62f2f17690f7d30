"""BackoffPolicy: exponential, fully jittered, capped; Retry-After wins when longer."""

from __future__ import annotations

import random

import pytest

from adapters.delivery.policy import BackoffPolicy

pytestmark = pytest.mark.unit


def test_delay_grows_exponentially_within_full_jitter() -> None:
    policy = BackoffPolicy(base=1.0, cap=100.0, max_attempts=10, rng=random.Random(7))
    for attempt in range(1, 7):
        delays = [policy.delay(attempt) for _ in range(200)]
        ceiling = 2.0 ** (attempt - 1)
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # jitter spans the whole window
        assert min(delays) < ceiling * 0.2


def test_delay_never_above_cap_even_for_huge_attempts() -> None:
    policy = BackoffPolicy(base=2.0, cap=600.0, max_attempts=20)
    assert all(0.0 <= policy.delay(n) <= 600.0 for n in (1, 10, 50, 10_000))


def test_retry_after_wins_when_longer_but_is_capped() -> None:
    policy = BackoffPolicy(base=0.01, cap=30.0, max_attempts=5)
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=3600.0) == 30.0
    assert policy.delay(1, retry_after=0.0) <= 0.01


def test_exhausted_after_max_attempts() -> None:
    policy = BackoffPolicy(base=1.0, cap=1.0, max_attempts=3)
    assert [policy.exhausted(n) for n in (0, 1, 2, 3, 4)] == [False, False, False, True, True]


def test_invalid_configuration_is_refused() -> None:
    with pytest.raises(ValueError):
        BackoffPolicy(base=1.0, cap=1.0, max_attempts=0)
    with pytest.raises(ValueError):
        BackoffPolicy(base=-1.0, cap=1.0, max_attempts=1)
