"""Backoff: exponential, fully jittered, capped; Retry-After never shortened; clamp or give up past the
cap."""

from __future__ import annotations

import random

import pytest

from adapters.backoff import Backoff
from adapters.llm.claude_transport import claude_retry_policy


def test_delay_grows_exponentially_within_full_jitter() -> None:
    policy = Backoff(base=1.0, cap=100.0, max_attempts=10, rng=random.Random(7))
    for attempt in range(1, 7):
        delays = [policy.delay(attempt) for _ in range(200)]
        ceiling = 2.0 ** (attempt - 1)
        assert all(d is not None and 0.0 <= d <= ceiling for d in delays)
        assert max(d for d in delays if d is not None) > ceiling * 0.8  # jitter spans the whole window
        assert min(d for d in delays if d is not None) < ceiling * 0.2


def test_delay_never_above_cap_even_for_huge_attempts() -> None:
    policy = Backoff(base=2.0, cap=600.0, max_attempts=20_000)
    assert all(0.0 <= (policy.delay(n) or 0.0) <= 600.0 for n in (1, 10, 50, 10_000))


def test_retry_after_is_never_shortened_and_is_clamped_for_queued_work() -> None:
    policy = Backoff(base=0.01, cap=30.0, max_attempts=5)
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=3600.0) == 30.0
    assert (policy.delay(1, retry_after=0.0) or 0.0) <= 0.01


def test_a_blocked_caller_gives_up_when_asked_to_wait_past_its_bound() -> None:
    policy = Backoff(base=1.0, cap=10.0, max_attempts=4, long_retry_after="give_up")
    assert policy.delay(1, 60.0) is None
    assert policy.delay(3, 7.0, lambda: 0.0) == 7.0
    assert policy.delay(3, 2.0, lambda: 1.0) == 4.0  # the backoff is longer than the server asked
    assert policy.delay(1, None, lambda: 1.0) == 1.0 and policy.delay(3, None, lambda: 1.0) == 4.0


def test_exhausted_after_max_attempts_and_no_delay_then() -> None:
    policy = Backoff(base=1.0, cap=1.0, max_attempts=3)
    assert [policy.exhausted(n) for n in (0, 1, 2, 3, 4)] == [False, False, False, True, True]
    assert policy.delay(3) is None


def test_the_claude_policy_counts_retries_after_the_first_attempt() -> None:
    policy = claude_retry_policy(max_retries=3, base=1.0, max_delay=10.0)
    assert policy.max_attempts == 4 and policy.delay(3, None, lambda: 1.0) == 4.0 and policy.delay(4) is None
    assert claude_retry_policy(max_retries=10, base=1.0, max_delay=10.0).delay(9, None, lambda: 1.0) == 10.0


def test_invalid_configuration_is_refused() -> None:
    with pytest.raises(ValueError):
        Backoff(base=1.0, cap=1.0, max_attempts=0)
    with pytest.raises(ValueError):
        Backoff(base=-1.0, cap=1.0, max_attempts=1)


def test_equal_jitter_draws_from_the_upper_half_so_the_waits_have_a_known_floor() -> None:
    policy = Backoff(base=1.0, cap=8.0, max_attempts=10, jitter="equal")
    assert [policy.delay(n, rand=lambda: 0.0) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert [policy.delay(n, rand=lambda: 1.0) for n in range(1, 6)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert Backoff(base=1.0, cap=8.0, max_attempts=10).delay(3, rand=lambda: 0.0) == 0.0  # full jitter
