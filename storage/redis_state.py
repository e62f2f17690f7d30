"""Shared, short-lived state in Redis: budgets, seen-evidence sets, the sub-query cache, hop hits, locks.

Every key starts with ``f"{prefix}:"``; every check-and-change is one Lua script, so concurrent workers
never overspend a budget or both claim the same passage. Connection problems surface as TransientError.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import redis

from investigation.state import Passage
from storage._redis_scripts import FIRST_SEEN, SLOT_BEGIN
from storage.budget_state import _DAY, COUNTERS, BudgetState, _text, _translated, _usage
from storage.hits import SlotHits, Written
from storage.redis_urls import client_from_url, kombu_url, redis_py_url
from storage.slot_state import (
    CacheQuery,
    Gathered,
    SlotBegin,
    SlotEnd,
    SlotOutcome,
    cache_digest,
    cached_passages,
    normalise_query,
    parked_hits,
)

log = logging.getLogger(__name__)


class RedisState(BudgetState):
    """Budgets (`BudgetState`), dedup sets, caches and locks of Sleuth, under one key prefix."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        super().__init__(client, prefix)
        self._first_seen = client.register_script(FIRST_SEEN)
        self._slot_begin = client.register_script(SLOT_BEGIN)
        self._written = Written()  # results this process parked, for its own reducer (`hop_results`)

    # -- dedup ---------------------------------------------------------------------------------------

    @_translated
    def first_seen(self, inv_id: str, hop: int, hashes: Sequence[str], ttl: int = _DAY) -> set[str]:
        """Add `hashes` to what this investigation has seen; returns those first seen at `hop`, also when
        the same hop is reduced again (a redelivered task)."""
        if not hashes:
            return set()
        keys = [self.key("seen", inv_id), self.key("seen_hop", inv_id)]
        fresh = self._first_seen(keys=keys, args=[int(ttl), int(hop), *hashes])
        return {_text(h) for h in fresh}

    # -- sub-query cache -----------------------------------------------------------------------------

    def cache_key(self, tenant: str, engine: str, query: str, k: int, acl: Iterable[str] | None,
                  version: int = 0) -> str:
        """The sub-query cache entry of (tenant, corpus version, engine, query, k, ACL): a hash of the corpus
        version it was stored under (`v`, checked again on every read) and the passages (`p`). The version
        is part of the key: after an ingest the old entries are never looked up, and expire."""
        return self.key("cache", tenant, f"v{int(version)}", engine, cache_digest(query, k, acl))

    def _queue_cache_set(self, pipe: Any, key: str, hits: Sequence[Passage], ttl: int, version: int) -> None:
        if ttl <= 0:
            return
        pipe.delete(key)  # a whole new entry: never the passages of one version with another's number
        pipe.hset(
            key, mapping={"v": int(version), "p": json.dumps([p.model_dump(mode="json") for p in hits])}
        )
        pipe.expire(key, int(ttl))

    # -- hop hits ------------------------------------------------------------------------------------

    @_translated
    def store_hits(self, inv_id: str, hop: int, slot: str, hits: SlotHits, ttl: int = _DAY) -> None:
        """Park one retrieval task's result (slot = sub-query x engine) for the hop's reducer."""
        pipe = self.client.pipeline(transaction=True)
        self._queue_store_hits(pipe, inv_id, hop, {slot: hits}, ttl)
        pipe.execute()

    def _queue_store_hits(self, pipe: Any, inv_id: str, hop: int, slots: Mapping[str, SlotHits], ttl: int, *,
                          remember: bool = True) -> bool:
        """Queue the parking of slots' results of one hop (one HSET of them all, one EXPIRE); True when a
        parse of what is stored gives each result itself (then, with `remember`, this process's reducer gets
        them
        back from `hop_results` unparsed)."""
        key = self.key("hits", inv_id, hop)
        parked: dict[str, bytes] = {}
        exact = True
        for slot, hits in slots.items():
            stored, readable = hits.stored_form()
            parked[slot] = raw = stored.encode()
            if readable and remember:
                self._written.remember(key, slot, raw, hits)
            exact &= readable
        pipe.hset(key, mapping=parked)
        pipe.expire(key, int(ttl))
        return exact

    def slot_begin(self, inv_id: str, hop: int, slot: str, cache: CacheQuery, *, now: float,
                   read_cache: bool = True) -> SlotBegin:
        """`slots_begin` of one slot (a slot begun again after its parked result proved unreadable)."""
        return self.slots_begin(inv_id, hop, [(slot, cache)], now=now, read_cache=read_cache)[0]

    @_translated
    def slots_begin(self, inv_id: str, hop: int, slots: Sequence[tuple[str, CacheQuery]], *,
                    now: float, charge_hop: str = "", read_cache: bool = True) -> list[SlotBegin]:
        """Everything retrieval slots of one hop (all of one tenant) do before they search, in one atomic
        round trip (`SLOT_BEGIN`), slot after slot: each slot's own parked result (set when its task is
        redelivered: then nothing else happens for it), the deadline, one retrieval call charged against
        the budget, and the sub-query cache entry of the current corpus version (a cache hit is still a
        retrieval call: budgets and figures count it). `charge_hop`, a `charge_once` marker, charges the hop
        itself first, in the same round trip, as `charge_once(inv_id, charge_hop, "hops")` would. Without
        `read_cache` (the cache is off: `subquery_cache_ttl` 0) no entry is read: every slot that may search
        is a miss."""
        if not slots:
            return []
        tenants = {(cache.tenant, cache.version) for _, cache in slots}
        if len(tenants) != 1:
            raise ValueError(
                f"slots of one hop search one tenant's corpus at one version, got {sorted(tenants)}"
            )
        version = next(iter(tenants))[1]
        marker = [self.key("once", charge_hop)] if charge_hop else []
        entries = [self._cache_key_of(cache) for _, cache in slots]
        keys = [self.key("hits", inv_id, hop), self.key("budget", inv_id), *marker, *entries]
        flat = self._slot_begin(keys=keys, args=[repr(float(now)), _DAY if charge_hop else 0,
                                                 int(version) if read_cache else -1,
                                                 *(slot for slot, _ in slots)])
        begins: list[SlotBegin] = []
        for i, (slot, cache) in enumerate(slots):
            outcome, payload = SlotOutcome(_text(flat[3 * i])), flat[3 * i + 1]
            parked, cached = None, None
            if outcome is SlotOutcome.PARKED:
                parked = parked_hits(payload, f"{inv_id} hop {hop} slot {slot}")
                if parked is None:  # unreadable: as if never stored; the slot charges and runs again
                    begins.append(self._begin_again(inv_id, hop, slot, cache, now=now, read_cache=read_cache))
                    continue
            elif outcome is SlotOutcome.HIT:
                cached = cached_passages(payload, entries[i])
                outcome = SlotOutcome.HIT if cached is not None else SlotOutcome.MISS
            begins.append(SlotBegin(outcome=outcome, parked=parked, cached=cached, version=version))
        return begins

    def _begin_again(self, inv_id: str, hop: int, slot: str, cache: CacheQuery, *, now: float,
                     read_cache: bool) -> SlotBegin:
        self.client.hdel(self.key("hits", inv_id, hop), slot)
        return self.slot_begin(inv_id, hop, slot, cache, now=now, read_cache=read_cache)

    def _cache_key_of(self, cache: CacheQuery, version: int | None = None) -> str:
        return self.cache_key(cache.tenant, cache.engine, cache.query, cache.k, cache.acl,
                              cache.version if version is None else version)

    @_translated
    def slots_end(self, inv_id: str, hop: int, ends: Sequence[SlotEnd], *, ttl: int = 0,
                  gather: Mapping[str, SlotHits] | None = None) -> Gathered | None:
        """Park each slot's result for the reducer (as `store_hits`) and, for an end with a `cache` query,
        cache its passages under the corpus `version` read before searching, so hits found before an ingest
        are never stored as current (ttl <= 0: not cached): one round trip, one transaction.

        `gather` (the hop's results parked before, by slot; empty when there are none) says that `ends` and
        it are every slot of the hop and that this process reduces the hop next: the same transaction then
        also marks the hop's passages seen (`first_seen`) and reads the budget, and what the reducer would
        read back is returned (`Gathered`). None when not gathering, or when a result does not read back as
        itself (`SlotHits.stored_form`): that reducer reads Redis as before."""
        if not ends:
            return None
        pipe = self.client.pipeline(transaction=True)
        for end in ends:
            if end.cache is not None and ttl > 0:
                self._queue_cache_set(
                    pipe, self._cache_key_of(end.cache, end.version), end.hits.passages, ttl, end.version
                )
        exact = self._queue_store_hits(pipe, inv_id, hop, {end.slot: end.hits for end in ends}, _DAY,
                                       remember=gather is None)
        if gather is None or not exact:
            pipe.execute()
            return None
        hits = {**gather, **{end.slot: end.hits for end in ends}}
        candidates = tuple(sorted({p.chunk_id for found in hits.values() for p in found.passages}))
        if candidates:  # `FIRST_SEEN` by its text: a script in a transaction needs no SCRIPT EXISTS first
            pipe.eval(FIRST_SEEN, 2, self.key("seen", inv_id), self.key("seen_hop", inv_id), _DAY, int(hop),
                      *candidates)
        pipe.hgetall(self.key("budget", inv_id))
        replies = pipe.execute()
        fresh = frozenset(_text(h) for h in replies[-2]) if candidates else frozenset()
        return Gathered(hits=hits, usage=_usage(replies[-1]), candidates=candidates, fresh=fresh)

    @_translated
    def load_hit(self, inv_id: str, hop: int, slot: str) -> SlotHits | None:
        """One slot's parked result, or None (a redelivered retrieval task checks only its own slot; an
        unreadable result counts as none, so the task runs again and overwrites it)."""
        raw = self.client.hget(self.key("hits", inv_id, hop), slot)
        return None if raw is None else parked_hits(raw, f"{inv_id} hop {hop} slot {slot}")

    @_translated
    def hop_results(self, inv_id: str, hop: int) -> tuple[dict[str, SlotHits], dict[str, Any]]:
        """Every parked result of the hop by slot (an unreadable one is left out: the reducer reports that
        slot as a missing result), and `usage`, in one round trip: what a reducer reads once the hop's
        slots are done."""
        key = self.key("hits", inv_id, hop)
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(key)
        pipe.hgetall(self.key("budget", inv_id))
        raw_hits, raw_budget = pipe.execute()
        parsed = {(name := _text(slot)): (self._written.recall(key, name, payload)
                                          or parked_hits(payload, f"{inv_id} hop {hop} slot {name}"))
                  for slot, payload in raw_hits.items()}
        return {slot: hits for slot, hits in parsed.items() if hits is not None}, _usage(raw_budget)

    # -- once-only markers, progress, housekeeping ---------------------------------------------------

    @_translated
    def once(self, key: str, ttl: int = _DAY) -> bool:
        """True for the first caller with this key (until it expires)."""
        return bool(self.client.set(self.key("once", key), "1", nx=True, ex=int(ttl)))

    @_translated
    def publish_progress(self, inv_id: str, event: dict[str, Any]) -> None:
        self.client.publish(self.key("progress", inv_id), json.dumps(event, default=str))

    def finished_channel(self) -> str:
        """The channel on which investigations that turned terminal are announced (their ids)."""
        return self.key("finished")

    @_translated
    def announce_finished(self, inv_id: str) -> None:
        """Tell the API processes that `inv_id` is terminal (committed): their requests long-polling it
        answer now (`api.finished`). A hint only: nobody who misses it waits for ever."""
        self.client.publish(self.finished_channel(), inv_id)

    def ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except redis.RedisError:
            return False



__all__ = [
    "COUNTERS",
    "CacheQuery",
    "Gathered",
    "RedisState",
    "SlotBegin",
    "SlotEnd",
    "SlotOutcome",
    "_translated",  # from storage.budget_state, for the other Redis stores (storage.tool_state)
    "cache_digest",
    "client_from_url",
    "kombu_url",
    "normalise_query",
    "redis_py_url",
]
