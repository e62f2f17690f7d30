"""Redis state of tools: the tenant-keyed cache of projected tool answers, and the circuit breaker.

Cache keys hold the tenant, the tool, and a digest of the declaration's revision, the arguments, the
audience and the requester's identity, so tenants and requesters never share an entry and a changed
declaration never serves an old answer. An entry keeps the time of the call it holds (`fetched_at`), so a
citation says when the data was fetched, not when the cache was read. The breaker opens
after `threshold` failures within `window` seconds and stays open for `cooldown` seconds; then one
trial call is let through (half-open) and its outcome closes or re-opens it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis

from storage.redis_state import _translated


@dataclass(frozen=True)
class CachedResult:
    """A cached projected answer and the epoch second of the call that fetched it."""

    document: dict[str, Any]
    fetched_at: float


@dataclass(frozen=True)
class BreakerConfig:
    threshold: int = 5
    window: int = 60
    cooldown: int = 30


class ToolState:
    """Cache and circuit breaker of the tools, under `prefix`; `clock` returns epoch seconds."""

    def __init__(self, client: redis.Redis, prefix: str, *, breaker: BreakerConfig | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.prefix = prefix
        self.breaker = breaker or BreakerConfig()
        self.clock = clock

    def _key(self, tenant: str, tool: str, *parts: str) -> str:
        return ":".join([self.prefix, "tool", tenant, tool, *parts])

    @staticmethod
    def digest(revision: str, args: Mapping[str, Any], audience: str, requester: str) -> str:
        """The cache key part of one call: `requester` is who asks (`ownership.requester_identity`)."""
        material = json.dumps([revision, audience, requester, dict(sorted(args.items()))], default=str,
                              sort_keys=True)
        return hashlib.sha256(material.encode()).hexdigest()

    # -- cache ---------------------------------------------------------------------------------------

    @_translated
    def cache_get(self, tenant: str, tool: str, digest: str) -> CachedResult | None:
        raw = self.client.get(self._key(tenant, tool, "cache", digest))
        if raw is None:
            return None
        entry = json.loads(raw)
        if not isinstance(entry, dict) or not isinstance(entry.get("document"), dict):
            return None  # not an entry of this format: a miss, never a guess at its fetch time
        return CachedResult(dict(entry["document"]), float(entry["fetched_at"]))

    @_translated
    def cache_set(self, tenant: str, tool: str, digest: str, document: Mapping[str, Any], ttl: int, *,
                  fetched_at: float) -> None:
        if ttl > 0:
            entry = {"document": dict(document), "fetched_at": fetched_at}
            self.client.set(self._key(tenant, tool, "cache", digest), json.dumps(entry), ex=int(ttl))

    @_translated
    def cached(self, tenant: str, tool: str, digest: str) -> bool:
        return bool(self.client.exists(self._key(tenant, tool, "cache", digest)))

    # -- circuit breaker -----------------------------------------------------------------------------

    @_translated
    def breaker_state(self, tenant: str, tool: str) -> str:
        """closed | open | half_open (open, but its cooldown is over: one trial may go)."""
        until = self.client.get(self._key(tenant, tool, "open_until"))
        if until is None:
            return "closed"
        return "open" if float(until) > self.clock() else "half_open"

    @_translated
    def allow(self, tenant: str, tool: str) -> bool:
        """May a call go out now? In half-open state only the first caller gets the trial."""
        state = self.breaker_state(tenant, tool)
        if state == "closed":
            return True
        if state == "open":
            return False
        trial = self._key(tenant, tool, "trial")
        return bool(self.client.set(trial, "1", nx=True, ex=max(1, self.breaker.cooldown)))

    @_translated
    def record(self, tenant: str, tool: str, *, ok: bool) -> str:
        """Record a call's outcome; returns the breaker state after it."""
        fails = self._key(tenant, tool, "failures")
        opened = self._key(tenant, tool, "open_until")
        trial = self._key(tenant, tool, "trial")
        if ok:
            self.client.delete(fails, opened, trial)
            return "closed"
        half_open = self.breaker_state(tenant, tool) == "half_open"
        pipe = self.client.pipeline(transaction=True)
        pipe.incr(fails)
        pipe.expire(fails, self.breaker.window)
        count = int(pipe.execute()[0])
        if half_open or count >= self.breaker.threshold:
            until = self.clock() + self.breaker.cooldown
            pipe = self.client.pipeline(transaction=True)
            pipe.set(opened, repr(until), ex=self.breaker.cooldown + self.breaker.window + 3600)
            pipe.delete(trial, fails)
            pipe.execute()
            return "open"
        return "closed"
