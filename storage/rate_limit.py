"""A token-bucket rate limiter in Redis, shared by every worker that uses the same API key.

Each bucket (requests, input tokens, output tokens per minute) refills continuously at its per-minute rate
up to one minute's worth. A call takes from all buckets at once or from none (one Lua script, Redis
clock), so the fleet as a whole stays under the account's limits. Usage known only after a call (output
tokens) is debited afterwards and may drive a bucket negative, which makes later callers wait.
The API key itself is never stored: buckets are keyed by a short hash of it.
`FailureCounter` counts failed sign-ins and bad API keys per client address and tenant, in fixed windows.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping

import redis

from investigation.errors import TransientError

# The clock is Redis's own (one clock for the whole fleet) unless the caller passes one (tests inject it).
_NOW = """
local now = tonumber(ARGV[2])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
end
"""

# KEYS: one hash per bucket. ARGV: ttl, now ("" = Redis time), then (rate per second, capacity, cost) per
# bucket. Returns the seconds to wait as a string ("0" = granted); nothing is taken unless every bucket has
# enough.
_ACQUIRE = _NOW + """
local ttl = tonumber(ARGV[1])
local levels = {}
local wait = 0
for i = 1, #KEYS do
  local rate = tonumber(ARGV[i * 3])
  local capacity = tonumber(ARGV[i * 3 + 1])
  local cost = math.min(tonumber(ARGV[i * 3 + 2]), capacity)
  local state = redis.call('HMGET', KEYS[i], 'level', 'ts')
  local level = tonumber(state[1]) or capacity
  local ts = tonumber(state[2]) or now
  level = math.min(capacity, level + math.max(0, now - ts) * rate)
  levels[i] = level
  if level < cost then
    wait = math.max(wait, (cost - level) / rate)
  end
end
for i = 1, #KEYS do
  local level = levels[i]
  if wait == 0 then level = level - math.min(tonumber(ARGV[i * 3 + 2]), tonumber(ARGV[i * 3 + 1])) end
  redis.call('HSET', KEYS[i], 'level', tostring(level), 'ts', tostring(now))
  redis.call('EXPIRE', KEYS[i], ttl)
end
return tostring(wait)
"""

# KEYS[1]: bucket. ARGV: ttl, now, rate per second, capacity, amount. Refills, then subtracts (may go
# negative).
_DEBIT = _NOW + """
local rate = tonumber(ARGV[3])
local capacity = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'level', 'ts')
local level = tonumber(state[1]) or capacity
local ts = tonumber(state[2]) or now
level = math.min(capacity, level + math.max(0, now - ts) * rate) - tonumber(ARGV[5])
redis.call('HSET', KEYS[1], 'level', tostring(level), 'ts', tostring(now))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
return tostring(level)
"""


def key_id(api_key: str) -> str:
    """The name buckets use for an API key: a short hash, so the key never reaches Redis."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:16]


class RateLimited(TransientError):
    """Raised when the shared limiter would make a caller wait longer than it may."""


class TokenBucketLimiter:
    """Per-minute buckets under ``{prefix}:ratelimit:{key id}:{bucket}``; a limit of 0 disables a bucket."""

    def __init__(self, client: redis.Redis, prefix: str, *, ttl: int = 600,
                 clock: Callable[[], float] | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl = ttl
        self.clock = clock  # None: Redis's clock, shared by every worker
        self._acquire = client.register_script(_ACQUIRE)
        self._debit = client.register_script(_DEBIT)

    def _now(self) -> str | float:
        return "" if self.clock is None else self.clock()

    def _key(self, key: str, bucket: str) -> str:
        return f"{self.prefix}:ratelimit:{key}:{bucket}"

    def try_acquire(self, key: str, costs: Mapping[str, float], per_minute: Mapping[str, float]) -> float:
        """Take `costs` from every limited bucket, or nothing; returns the seconds to wait (0 = granted)."""
        active = [(b, float(c)) for b, c in costs.items() if per_minute.get(b, 0) > 0]
        if not active:
            return 0.0
        args: list[str | float | int] = [self.ttl, self._now()]
        for bucket, cost in active:
            rate = float(per_minute[bucket])
            args += [rate / 60.0, rate, max(0.0, cost)]
        try:
            wait = self._acquire(keys=[self._key(key, b) for b, _ in active], args=args)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise TransientError(f"redis unavailable: {exc}") from exc
        return float(wait.decode() if isinstance(wait, bytes) else wait)

    def acquire(self, key: str, costs: Mapping[str, float], per_minute: Mapping[str, float], *,
                max_wait: float, sleep: Callable[[float], None] = time.sleep) -> float:
        """Block until granted; returns the seconds waited. Raises RateLimited past `max_wait`."""
        waited = 0.0
        while True:
            wait = self.try_acquire(key, costs, per_minute)
            if wait <= 0:
                return waited
            if waited + wait > max_wait:
                raise RateLimited(f"shared rate limit: {wait:.1f}s more to wait (waited {waited:.1f}s)",
                                  retry_after=wait)
            sleep(wait)
            waited += wait

    def debit(self, key: str, bucket: str, amount: float, per_minute: float) -> float:
        """Subtract usage learnt after the fact; returns the bucket's new level."""
        if per_minute <= 0 or amount <= 0:
            return 0.0
        try:
            level = self._debit(keys=[self._key(key, bucket)],
                                args=[self.ttl, self._now(), per_minute / 60.0, per_minute, float(amount)])
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise TransientError(f"redis unavailable: {exc}") from exc
        return float(level.decode() if isinstance(level, bytes) else level)

    def level(self, key: str, bucket: str) -> float | None:
        raw = self.client.hget(self._key(key, bucket), "level")
        return None if raw is None else float(raw)


class FailureCounter:
    """Failed sign-ins and bad API keys counted per subject (a client address, a tenant) in fixed windows:
    ``{prefix}:authfail:{subject}:{window index}``. Past `limit` failures in a window, the subject is
    refused until the window ends. The clock is the caller's (tests inject one); windows are wall-clock
    aligned, so every API replica counts into the same key."""

    def __init__(self, client: redis.Redis, prefix: str, *, limit: int, window_seconds: int,
                 clock: Callable[[], float] = time.time) -> None:
        if limit < 1 or window_seconds < 1:
            raise ValueError("limit and window_seconds must be at least 1")
        self.client = client
        self.prefix = prefix
        self.limit = limit
        self.window = window_seconds
        self.clock = clock

    def _key(self, subject: str, now: float) -> str:
        return f"{self.prefix}:authfail:{subject}:{int(now // self.window)}"

    def retry_after(self, subjects: list[str]) -> float | None:
        """Seconds until every refused subject may try again; None when none of them is over the limit."""
        if not subjects:
            return None
        now = self.clock()
        counts = self.client.mget([self._key(s, now) for s in subjects])
        if any(c is not None and int(c) >= self.limit for c in counts):
            return max(1.0, (int(now // self.window) + 1) * self.window - now)
        return None

    def record(self, subjects: list[str]) -> None:
        """One more failure for each subject (the key expires with its window)."""
        now = self.clock()
        pipe = self.client.pipeline(transaction=False)
        for subject in subjects:
            key = self._key(subject, now)
            pipe.incr(key)
            pipe.expire(key, self.window + 1)
        pipe.execute()

    def count(self, subject: str) -> int:
        raw = self.client.get(self._key(subject, self.clock()))
        return 0 if raw is None else int(raw)
