"""`Backoff`: when to try again after a failed call, and when to give up — one small policy object used by
every adapter that retries (webhook and helpdesk deliveries, the Claude transport, tool calls)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter, bounded by `cap`, for at most `max_attempts` attempts.

    The wait after the n-th failed attempt is uniform in ``[0, min(cap, base * 2**(n-1))]``: full jitter
    spreads the retries of many calls that failed together. ``jitter="equal"`` draws from the upper half
    of that range instead, so the waits also add up to a known minimum (riding out an outage of known
    length, e.g. a database restart). A server's ``Retry-After`` wins when it asks for
    longer than the jittered wait (never shortened). When it asks
    for longer than `cap`, `long_retry_after` decides: ``"clamp"`` retries at `cap` (a queued delivery:
    a receiver cannot park it for a day) or ``"give_up"`` (a worker blocked in a call: waiting less would
    disrespect the server, waiting more breaks our bound).
    """

    base: float
    cap: float
    max_attempts: int
    long_retry_after: Literal["clamp", "give_up"] = "clamp"
    jitter: Literal["full", "equal"] = "full"
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.base < 0 or self.cap < 0:
            raise ValueError("base and cap must be >= 0")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")

    def exhausted(self, attempts: int) -> bool:
        """True when `attempts` attempts were made and no other one is allowed."""
        return attempts >= self.max_attempts

    def delay(self, attempt: int, retry_after: float | None = None,
              rand: Callable[[], float] | None = None) -> float | None:
        """Seconds to wait after attempt `attempt` (1-based) failed, or None when no attempt may follow."""
        if self.exhausted(attempt):
            return None
        draw = rand if rand is not None else self.rng.random
        exponent = max(0, attempt - 1)
        # min() before the power would overflow for large attempt numbers.
        ceiling = self.cap if exponent >= 64 else min(self.cap, self.base * (2.0**exponent))
        wait = draw() * ceiling if self.jitter == "full" else ceiling / 2 + draw() * ceiling / 2
        if retry_after is not None and retry_after > 0:
            if retry_after > self.cap:
                return None if self.long_retry_after == "give_up" else self.cap
            wait = max(wait, retry_after)
        return min(max(wait, 0.0), self.cap)
