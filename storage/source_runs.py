"""Redis state of source syncs: the lock that lets one sync per source run at a time (it expires, so a killed
worker's sync is taken over later), and the ids a run's listing named (for reconciling deletions).

`MemoryRuns` is the same for a process without Redis (`sleuth sources sync` with nothing running).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import redis

LISTING_TTL = 86400  # seconds a listing's ids are kept between two of its batches
_STARTED = "\x00listing"  # member present once a listing has begun: a set without it was lost, not empty

_REFRESH = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('expire', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class Runs(Protocol):
    def acquire(self, source_id: str, run_id: str, ttl: int) -> bool: ...
    def refresh(self, source_id: str, run_id: str, ttl: int) -> bool: ...
    def release(self, source_id: str, run_id: str) -> None: ...
    def holder(self, source_id: str) -> str | None: ...
    def add_listed(
        self, source_id: str, listing: str, ids: Iterable[str], *, failed: bool = False
    ) -> None: ...
    def listed(self, source_id: str, listing: str) -> tuple[set[str], set[str]] | None: ...
    def forget(self, source_id: str, listing: str) -> None: ...


class RedisRuns:
    """`Runs` in Redis under `<prefix>:source:`."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.client = client
        self.prefix = f"{prefix}:source"

    def _lock(self, source_id: str) -> str:
        return f"{self.prefix}:lock:{source_id}"

    def acquire(self, source_id: str, run_id: str, ttl: int) -> bool:
        return bool(self.client.set(self._lock(source_id), run_id, nx=True, ex=ttl))

    def refresh(self, source_id: str, run_id: str, ttl: int) -> bool:
        return bool(self.client.eval(_REFRESH, 1, self._lock(source_id), run_id, ttl))

    def release(self, source_id: str, run_id: str) -> None:
        self.client.eval(_RELEASE, 1, self._lock(source_id), run_id)

    def holder(self, source_id: str) -> str | None:
        value = self.client.get(self._lock(source_id))
        return value.decode() if isinstance(value, bytes) else (str(value) if value is not None else None)

    def add_listed(self, source_id: str, listing: str, ids: Iterable[str], *, failed: bool = False) -> None:
        key = f"{self.prefix}:{'failed' if failed else 'listed'}:{source_id}:{listing}"
        pipe = self.client.pipeline(transaction=True)
        pipe.sadd(key, _STARTED, *ids)
        pipe.expire(key, LISTING_TTL)
        pipe.execute()

    def listed(self, source_id: str, listing: str) -> tuple[set[str], set[str]] | None:
        """(listed ids, failed ids) of a listing, or None when its ids were lost (never reconcile then)."""
        found = {m.decode() if isinstance(m, bytes) else str(m)
                 for m in self.client.smembers(f"{self.prefix}:listed:{source_id}:{listing}")}
        failed = {m.decode() if isinstance(m, bytes) else str(m)
                  for m in self.client.smembers(f"{self.prefix}:failed:{source_id}:{listing}")}
        if _STARTED not in found:
            return None
        return found - {_STARTED}, failed - {_STARTED}

    def forget(self, source_id: str, listing: str) -> None:
        self.client.delete(f"{self.prefix}:listed:{source_id}:{listing}",
                           f"{self.prefix}:failed:{source_id}:{listing}")


class MemoryRuns:
    """`Runs` in this process only (no Redis: nothing else can sync at the same time)."""

    def __init__(self) -> None:
        self.locks: dict[str, str] = {}
        self.sets: dict[tuple[str, str, bool], set[str]] = {}

    def acquire(self, source_id: str, run_id: str, ttl: int) -> bool:
        return self.locks.setdefault(source_id, run_id) == run_id

    def refresh(self, source_id: str, run_id: str, ttl: int) -> bool:
        return self.locks.get(source_id) == run_id

    def release(self, source_id: str, run_id: str) -> None:
        if self.locks.get(source_id) == run_id:
            del self.locks[source_id]

    def holder(self, source_id: str) -> str | None:
        return self.locks.get(source_id)

    def add_listed(self, source_id: str, listing: str, ids: Iterable[str], *, failed: bool = False) -> None:
        self.sets.setdefault((source_id, listing, failed), set()).update(ids)

    def listed(self, source_id: str, listing: str) -> tuple[set[str], set[str]] | None:
        if (source_id, listing, False) not in self.sets:
            return None
        return self.sets[(source_id, listing, False)], self.sets.get((source_id, listing, True), set())

    def forget(self, source_id: str, listing: str) -> None:
        self.sets.pop((source_id, listing, False), None)
        self.sets.pop((source_id, listing, True), None)
