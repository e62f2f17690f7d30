"""A hop's searches: one sub-query on one engine (a Celery retrieval task), or several of one hop at once
(the inline executor). Results are parked in Redis for the hop's reducer; a task returns only a summary."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from bootstrap import Services
from investigation.errors import SleuthError
from investigation.state import Passage, RetrievalScope
from storage import repositories as repo
from storage.hits import SlotHits
from storage.redis_state import CacheQuery, SlotEnd, SlotOutcome
from tasks.next import hop_marker
from tasks.relay import Relay

log = logging.getLogger(__name__)


def retrieve(services: Services, inv_id: str, hop: int, index: int, engine: str) -> dict[str, Any]:
    """One sub-query on one engine (a Celery retrieval task). Results go to Redis (the task returns only a
    summary)."""
    return retrieve_many(services, inv_id, hop, [(index, engine)])[0]


def retrieve_many(services: Services, inv_id: str, hop: int, slots: Sequence[tuple[int, str]], *,
                  run: Callable[..., Any] = map, found: Callable[[Sequence[Passage]], None] | None = None,
                  relay: Relay | None = None) -> list[dict[str, Any]]:
    """Search slots (sub-query index, engine) of one hop, each as a retrieval task would, in one go: one read
    of the plan, one Redis round trip before the searches (`RedisState.slots_begin`) and one after (their
    results parked, `slots_end`), their trace events in one transaction. `run` maps the searches (a thread
    pool's `map`: in parallel); `found`, if given, gets each search's passages as soon as it has them (from
    the thread that searched). With a `relay` (the inline executor), the hop's charge, if not made yet, rides
    on the round trip before the searches, and the relay is handed the searches' trace events, for the
    reducer's transaction, and, when they are every slot of the hop (`Relay.whole_hop`), what the reducer
    would read from Redis. Returns each slot's summary, in order."""
    if not slots:
        return []
    with services.session() as session:  # read once per hop and process (repo.planned_hop)
        planned = repo.planned_hop(session, investigation_id=inv_id, number=hop)
    for index, engine in slots:
        if planned is None or index >= len(planned.queries):
            raise LookupError(f"hop {hop} slot {index}:{engine} of {inv_id} was never planned")
    assert planned is not None  # checked for each slot above (and there is at least one)
    tenant = planned.tenant_id
    scope = RetrievalScope.of(planned.audience, list(planned.principals))
    k = services.settings.limits.retrieve_k
    terms = scope.cache_terms()
    acl = None if terms is None else tuple(terms)
    names = [f"{index}:{engine}" for index, engine in slots]
    caches = [CacheQuery(tenant=tenant, engine=engine, query=planned.queries[index], k=k, acl=acl,
                         version=planned.corpus_version) for index, engine in slots]
    if services.settings.workers.debug_retrieve_delay_ms:
        time.sleep(services.settings.workers.debug_retrieve_delay_ms / 1000)
    started = time.perf_counter()
    # One Redis round trip: each slot's parked result (a redelivered task), the deadline, one retrieval call
    # charged, the cached hits of the corpus version read when the hop was planned (hits found before an
    # ingest are never cached as new).
    begins = services.state.slots_begin(inv_id, hop, list(zip(names, caches, strict=True)), now=time.time(),
                                        charge_hop=hop_marker(inv_id, hop) if relay is not None else "",
                                        read_cache=services.settings.engines.subquery_cache_ttl > 0)
    todo = [i for i, begin in enumerate(begins) if begin.parked is None]

    def search(i: int) -> tuple[SlotEnd, repo.NewEvent]:
        cache, begin = caches[i], begins[i]
        passages: list[Passage] = []
        error: str | None = None
        # found by this search (not cached, not refused, no error)
        to_cache = begin.outcome is SlotOutcome.MISS
        if begin.outcome is SlotOutcome.DEADLINE:
            error = "deadline"
        elif begin.outcome is SlotOutcome.BUDGET:
            error = "retrieval_budget"
        elif begin.cached is not None:
            passages = begin.cached
        else:
            try:
                passages = services.backends[cache.engine].search(tenant, cache.query, k, acl=scope.acl,
                                                                  visibility=scope.visibility)
            except SleuthError as exc:  # the hop degrades: this engine's evidence is missing, recorded
                error, to_cache = f"{type(exc).__name__}: {exc}", False
            except Exception as exc:  # an engine bug degrades the hop too: it never kills the run
                log.exception("retrieval %s of %s hop %s crashed", names[i], inv_id, hop)
                error, to_cache = f"{type(exc).__name__}: {exc}"[:500], False
        if found is not None and passages:
            found(passages)
        hits = SlotHits(query=cache.query, engine=cache.engine, passages=tuple(passages), error=error,
                        cached=begin.outcome is SlotOutcome.HIT,
                        ms=round((time.perf_counter() - started) * 1000, 2))
        event = repo.new_event(
            investigation_id=inv_id,
            step_key=f"retrieve:{hop}:{names[i]}",
            kind="retrieval",
            hop=hop,
            data={
                "engine": cache.engine,
                "query": cache.query,
                "ids": [p.chunk_id for p in passages],
                "ms": hits.ms,
                "cached": hits.cached,
                "error": error,
            },
        )
        return SlotEnd(names[i], hits, cache if to_cache else None, begin.version), event

    searched = list(run(search, todo))
    ends = [end for end, _ in searched]
    parked = {names[i]: begin.parked for i, begin in enumerate(begins) if begin.parked is not None}
    gathered = services.state.slots_end(inv_id, hop, ends, ttl=services.settings.engines.subquery_cache_ttl,
                                        gather=parked if relay is not None and relay.whole_hop else None)
    if relay is not None:
        relay.events.extend(event for _, event in searched)
        relay.gathered = gathered
    elif searched:
        with services.session() as session:
            repo.add_events(session, [event for _, event in searched])
    results = {i: parked[names[i]] for i in range(len(names)) if names[i] in parked}
    results.update((i, end.hits) for i, end in zip(todo, ends, strict=True))
    return [
        {"slot": names[i], "hits": len(results[i].passages), "error": results[i].error}
        for i in range(len(names))
    ]
