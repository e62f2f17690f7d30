"""`BackoffPolicy`: when to retry a failed delivery, and when to give up (one small object)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(frozen=True)
class BackoffPolicy:
    """Exponential backoff with full jitter ("AWS style"), bounded by `cap`, for `max_attempts` tries.

    The delay after the n-th failed attempt is uniform in ``[0, min(cap, base * 2**(n-1))]``: full jitter
    spreads retries of many deliveries that failed together (a receiver that came back up is not hit by
    all of them in the same second). A server's ``Retry-After`` wins when it asks for longer, but nothing
    waits longer than `cap` — a receiver cannot park a delivery for a day.
    """

    base: float
    cap: float
    max_attempts: int
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.base < 0 or self.cap < 0:
            raise ValueError("base and cap must be >= 0")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")

    def delay(self, attempt_number: int, retry_after: float | None = None) -> float:
        """Seconds to wait after attempt `attempt_number` (1-based) failed; never above `cap`."""
        exponent = max(0, attempt_number - 1)
        # min() before the power would overflow for large attempt numbers.
        ceiling = self.cap if exponent >= 64 else min(self.cap, self.base * (2.0**exponent))
        wait = self.rng.uniform(0.0, ceiling)
        if retry_after is not None and retry_after > wait:
            wait = retry_after
        return min(max(wait, 0.0), self.cap)

    def exhausted(self, attempts: int) -> bool:
        """True when `attempts` attempts were made and no other one is allowed."""
        return attempts >= self.max_attempts
