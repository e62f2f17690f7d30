"""RedisState against a real Redis: budgets, dedup, the tenant-scoped cache, parked hits, markers."""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis
from pydantic import ValidationError
from redis.backoff import NoBackoff
from redis.retry import Retry

from investigation.errors import TransientError
from investigation.state import Passage
from storage.hits import SlotHits
from storage.redis_state import CacheQuery, RedisState, SlotBegin, SlotEnd, SlotOutcome, client_from_url


def _keys(client: redis.Redis, prefix: str) -> set[str]:
    return {k if isinstance(k, str) else k.decode() for k in client.scan_iter(match=f"{prefix}:*")}


def test_budget_charges_stop_at_the_limit(redis_state: RedisState) -> None:
    deadline = time.time() + 60
    redis_state.init_budget(
        "inv", max_hops=2, max_retrieval_calls=5, max_llm_tokens=100, deadline_ts=deadline
    )
    assert [redis_state.charge("inv", "hops") for _ in range(3)] == [True, True, False]
    assert redis_state.charge("inv", "retrieval_calls", 5)
    assert not redis_state.charge("inv", "retrieval_calls")
    assert not redis_state.charge("inv", "llm_tokens", 101)  # nothing charged when it would overflow
    assert redis_state.charge("inv", "llm_tokens", 100)
    assert redis_state.charge("inv", "llm_tokens", 0)
    assert redis_state.usage("inv") == {
        "hops": 2,
        "retrieval_calls": 5,
        "llm_tokens": 100,
        "max_hops": 2,
        "max_retrieval_calls": 5,
        "max_llm_tokens": 100,
        "deadline_ts": pytest.approx(deadline),
    }


def test_init_budget_again_changes_nothing(redis_state: RedisState, redis_client: redis.Redis) -> None:
    redis_state.init_budget("inv", max_hops=3, max_retrieval_calls=10, max_llm_tokens=50, deadline_ts=100.0)
    redis_state.charge("inv", "hops", 2)
    redis_state.init_budget("inv", max_hops=9, max_retrieval_calls=90, max_llm_tokens=90, deadline_ts=999.0)
    usage = redis_state.usage("inv")
    assert (usage["hops"], usage["max_hops"], usage["deadline_ts"]) == (2, 3, 100.0)
    assert 0 < redis_client.ttl(redis_state.key("budget", "inv")) <= 86400


def test_charging_without_a_budget_or_wrongly(redis_state: RedisState) -> None:
    assert not redis_state.charge("nobudget", "hops")
    assert redis_state.usage("nobudget")["max_hops"] == 0
    with pytest.raises(ValueError):
        redis_state.charge("inv", "coffee")
    with pytest.raises(ValueError):
        redis_state.charge("inv", "hops", -1)


def test_tenant_tokens_per_utc_day(
    redis_state: RedisState, redis_client: redis.Redis, redis_prefix: str
) -> None:
    assert redis_state.charge_tenant_tokens("acme", 600, daily_limit=1000)
    assert not redis_state.charge_tenant_tokens("acme", 401, daily_limit=1000)
    assert redis_state.charge_tenant_tokens("acme", 400, daily_limit=1000)
    assert redis_state.charge_tenant_tokens("globex", 1000, daily_limit=1000)
    assert redis_state.tenant_tokens_used("acme") == 1000
    [key] = [k for k in _keys(redis_client, redis_prefix) if ":acme:" in k]
    assert key.endswith(time.strftime("%Y-%m-%d", time.gmtime()))
    assert 86400 < redis_client.ttl(key) <= 2 * 86400


def test_first_seen_is_stable_for_a_redelivered_hop(redis_state: RedisState) -> None:
    assert redis_state.first_seen("inv", 1, ["a", "b"]) == {"a", "b"}
    assert redis_state.first_seen("inv", 1, ["a", "b", "c"]) == {"a", "b", "c"}  # hop 1 reduced again
    assert redis_state.first_seen("inv", 2, ["b", "c", "d"]) == {"d"}
    assert redis_state.first_seen("inv", 2, ["b", "c", "d"]) == {"d"}
    assert redis_state.first_seen("inv", 3, ["e"]) == {"e"}
    assert redis_state.first_seen("inv", 4, ["e", "f"]) == {"f"}
    assert redis_state.first_seen("inv", 5, ["f", "g"]) == {"g"}
    assert redis_state.first_seen("other", 1, ["a", "g"]) == {"a", "g"}  # per investigation
    assert redis_state.first_seen("inv", 6, []) == set()


def _passage(chunk_id: str, score: float = 1.5) -> Passage:
    return Passage(chunk_id=chunk_id, source_id=chunk_id.split("#")[0], title="T", text="text", score=score,
                   engine="bm25", rank=1)


def _cached(
    state: RedisState,
    tenant: str,
    engine: str,
    query: str,
    k: int,
    acl: tuple[str, ...] | None,
    *,
    version: int = 0,
    read_cache: bool = True,
) -> list[Passage] | None:
    """What a new slot would find in the sub-query cache (each look-up is a slot of an investigation of its
    own)."""
    inv_id = f"inv-{uuid.uuid4().hex[:8]}"
    state.init_budget(inv_id, max_hops=1, max_retrieval_calls=1, max_llm_tokens=0, deadline_ts=2e9)
    return state.slot_begin(inv_id, 1, "0:x", CacheQuery(tenant, engine, query, k, acl, version), now=1e9,
                            read_cache=read_cache).cached


def _cache(state: RedisState, cache: CacheQuery, hits: list[Passage], *, version: int, ttl: int = 60) -> None:
    state.slots_end("inv-writer", 1, [SlotEnd(f"{uuid.uuid4().hex[:6]}:x", SlotHits(
        query=cache.query, engine=cache.engine, passages=tuple(hits)), cache, version)], ttl=ttl)


def test_cache_is_tenant_scoped_normalised_and_invalidated_by_ingest(redis_state: RedisState) -> None:
    hits = [_passage("c1#0")]
    _cache(
        redis_state,
        CacheQuery("acme", "lexical", "Which  plan has SSO?", 10, ("staff", "all")),
        hits,
        version=0,
    )
    assert _cached(redis_state, "acme", "lexical", "which plan has sso?", 10, ("all", "staff")) == hits
    assert _cached(redis_state, "globex", "lexical", "which plan has sso?", 10, ("all", "staff")) is None
    assert _cached(redis_state, "acme", "vector", "which plan has sso?", 10, ("all", "staff")) is None
    assert _cached(redis_state, "acme", "lexical", "which plan has sso?", 5, ("all", "staff")) is None
    assert _cached(redis_state, "acme", "lexical", "which plan has sso?", 10, ("all",)) is None
    # An ingest raised the tenant's corpus version (the database's): the entry of version 0 is never read.
    assert (
        _cached(redis_state, "acme", "lexical", "which plan has sso?", 10, ("all", "staff"), version=1)
        is None
    )
    # The cache turned off (subquery_cache_ttl 0): no entry is read, not even one of the current version.
    assert _cached(redis_state, "acme", "lexical", "which plan has sso?", 10, ("all", "staff"),
                   read_cache=False) is None


def test_hits_are_parked_per_hop(redis_state: RedisState, redis_client: redis.Redis) -> None:
    lexical = SlotHits(
        query="q", engine="lexical", passages=(_passage("a#0"),), error=None, cached=False, ms=1.5
    )
    vector = SlotHits(query="q", engine="vector", error="TransientError: down")
    redis_state.store_hits("inv", 1, "0:lexical", lexical)
    redis_state.store_hits("inv", 1, "0:vector", vector)
    redis_state.store_hits("inv", 2, "0:lexical", SlotHits(query="q2", engine="lexical"))
    assert redis_state.hop_results("inv", 1)[0] == {"0:lexical": lexical, "0:vector": vector}
    assert redis_state.hop_results("inv", 3)[0] == {}
    assert redis_state.load_hit("inv", 1, "0:vector") == vector
    assert redis_state.load_hit("inv", 2, "0:vector") is None
    assert redis_client.ttl(redis_state.key("hits", "inv", 1)) > 0


def test_a_reducer_reads_the_hops_hits_and_the_budget_in_one_round_trip(
        redis_state: RedisState, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    redis_state.init_budget("inv", max_hops=3, max_retrieval_calls=9, max_llm_tokens=0, deadline_ts=2e9)
    redis_state.charge("inv", "retrieval_calls", 2)
    lexical = SlotHits(query="q", engine="lexical", passages=(_passage("a#0"),))
    redis_state.store_hits("inv", 1, "0:lexical", lexical)
    # an unreadable one is left out
    redis_client.hset(redis_state.key("hits", "inv", 1), "1:bm25", "not json")
    expected = redis_state.usage("inv")
    sent: list[object] = []
    # no lone command
    monkeypatch.setattr(redis_state.client, "execute_command", lambda *a, **k: sent.append(a))
    hits, usage = redis_state.hop_results("inv", 1)
    assert sent == []
    assert hits == {"0:lexical": lexical} and usage == expected
    assert (usage["retrieval_calls"], usage["max_hops"]) == (2, 3)
    assert redis_state.hop_results("inv", 7) == ({}, usage)


def test_a_reducer_gets_back_what_its_process_parked_only_when_redis_holds_those_very_bytes(
        redis_state: RedisState, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reducer of the process that parked a result takes the object it wrote instead of parsing it
    again; a result another process parked, or one overwritten since, is parsed from what Redis holds."""
    mine = SlotHits(query="q", engine="lexical", passages=(_passage("a#0"), _passage("b#0", 0.25)), ms=3.25)
    redis_state.store_hits("inv", 1, "0:lexical", mine)
    other = RedisState(redis_state.client, redis_state.prefix)  # another process: nothing of its own parked
    theirs = SlotHits(query="q", engine="vector", passages=(_passage("c#0"),))
    other.store_hits("inv", 1, "0:vector", theirs)
    redis_state.store_hits("inv", 1, "1:lexical", SlotHits(query="q1", engine="lexical"))
    changed = SlotHits(query="q1", engine="lexical", passages=(_passage("d#0"),))
    redis_client.hset(redis_state.key("hits", "inv", 1), "1:lexical", changed.to_json())  # overwritten since
    parsed: list[str] = []
    real = SlotHits.from_json

    def parse(cls: type[SlotHits], raw: str | bytes) -> SlotHits:
        parsed.append(str(raw))
        return real(raw)

    monkeypatch.setattr(SlotHits, "from_json", classmethod(parse))
    hits = redis_state.hop_results("inv", 1)[0]
    assert hits == {"0:lexical": mine, "0:vector": theirs, "1:lexical": changed}
    assert hits["0:lexical"] is mine and len(parsed) == 2  # the other two were parsed
    assert redis_state.hop_results("inv", 1)[0] == hits and len(parsed) == 5  # recalled once, then parsed
    # A result whose stored form cannot be read back (a lone surrogate) is a missing result here too.
    broken = SlotHits(query="x " + chr(0xD800), engine="lexical")
    redis_state.store_hits("inv", 2, "0:lexical", broken)
    assert redis_state.hop_results("inv", 2)[0] == {}


def test_charge_once_charges_only_the_first_time_a_marker_is_used(
        redis_state: RedisState, redis_client: redis.Redis) -> None:
    redis_state.init_budget("inv", max_hops=1, max_retrieval_calls=5, max_llm_tokens=0, deadline_ts=2e9)
    assert redis_state.charge_once("inv", "inv:hop-charged:1", "hops")
    assert not redis_state.charge_once("inv", "inv:hop-charged:1", "hops")  # a redelivered step
    assert redis_state.usage("inv")["hops"] == 1
    # first use; over the limit: not charged
    assert redis_state.charge_once("inv", "inv:hop-charged:2", "hops")
    assert redis_state.usage("inv")["hops"] == 1
    assert not redis_state.once("inv:hop-charged:2")  # the same marker as `once` (an older step agrees)
    assert 0 < redis_client.ttl(redis_state.key("once", "inv:hop-charged:1")) <= 86400
    with pytest.raises(ValueError):
        redis_state.charge_once("inv", "m", "nope")


def test_parked_hits_keep_the_json_the_tasks_wrote_as_dicts(redis_state: RedisState,
                                                           redis_client: redis.Redis) -> None:
    """The stored form is the one the reducer read before the model (a redelivered task or a reducer of
    the previous release reads the same): only the fields a task set, passages in full."""
    passage = _passage("a#0")
    redis_state.store_hits("inv", 1, "0:bm25", SlotHits(query="q", engine="bm25", passages=(passage,),
                                                        error=None, cached=True, ms=2.0))
    redis_state.store_hits("inv", 1, "related:tool:billing", SlotHits(query="finding", engine="tool:billing",
                                                                      error=None, passages=()))
    stored = redis_client.hgetall(redis_state.key("hits", "inv", 1))
    assert json.loads(stored["0:bm25"]) == {"query": "q", "engine": "bm25", "passages": [
        passage.model_dump(mode="json")], "error": None, "cached": True, "ms": 2.0}
    assert json.loads(stored["related:tool:billing"]) == {"query": "finding", "engine": "tool:billing",
                                                          "error": None, "passages": []}
    # ... and a dict written by the previous release is read as the same slot.
    redis_client.hset(redis_state.key("hits", "inv", 2), "0:bm25", json.dumps(
        {"query": "q", "engine": "bm25", "passages": [passage.model_dump(mode="json")], "error": None,
         "cached": False, "ms": 0.0}))
    assert redis_state.load_hit("inv", 2, "0:bm25") == SlotHits(query="q", engine="bm25", passages=(passage,))


def test_an_invalid_parked_result_or_cache_entry_reads_as_absent(redis_state: RedisState,
                                                                 redis_client: redis.Redis) -> None:
    key = redis_state.key("hits", "inv", 1)
    redis_client.hset(
        key, "0:bm25", json.dumps({"query": "q", "engine": "bm25", "passages": [{"chunk_id": 1}]})
    )
    redis_client.hset(key, "0:vector", "not json")
    redis_state.store_hits("inv", 1, "1:bm25", SlotHits(query="q1", engine="bm25"))
    assert redis_state.load_hit("inv", 1, "0:bm25") is None  # the task runs again and overwrites it
    assert set(redis_state.hop_results("inv", 1)[0]) == {"1:bm25"}  # the reducer reports a missing result
    with pytest.raises(ValidationError):
        SlotHits.model_validate({"query": "q", "engine": "bm25", "hits": []})  # no unknown fields
    redis_client.hset(redis_state.cache_key("acme", "bm25", "q", 5, None),
                      mapping={"v": 0, "p": json.dumps([{"x": 1}])})
    assert _cached(redis_state, "acme", "bm25", "q", 5, None) is None  # a cache miss
    cache = CacheQuery(tenant="acme", engine="bm25", query="q", k=5, acl=None)
    redis_state.init_budget("inv", max_hops=2, max_retrieval_calls=5, max_llm_tokens=0, deadline_ts=2e9)
    begin = redis_state.slot_begin("inv", 1, "0:bm25", cache, now=1e9)  # the unreadable slot runs again
    assert (begin.outcome, begin.parked, begin.cached) == (SlotOutcome.MISS, None, None)
    assert redis_state.usage("inv")["retrieval_calls"] == 1


def test_once_is_true_for_the_first_caller_only(redis_state: RedisState, redis_client: redis.Redis) -> None:
    assert redis_state.once("deliver:msg_1")
    assert not redis_state.once("deliver:msg_1")
    assert redis_state.once("deliver:msg_2", ttl=5)
    assert 0 < redis_client.ttl(redis_state.key("once", "deliver:msg_2")) <= 5


def test_progress_is_published_on_the_prefixed_channel(
    redis_state: RedisState, redis_client: redis.Redis
) -> None:
    pubsub = redis_client.pubsub()
    pubsub.subscribe(f"{redis_state.prefix}:progress:inv")
    try:
        assert pubsub.get_message(timeout=2)["type"] == "subscribe"
        redis_state.publish_progress("inv", {"kind": "hop", "hop": 1})
        message = pubsub.get_message(timeout=2)
        assert message is not None and json.loads(message["data"]) == {"kind": "hop", "hop": 1}
    finally:
        pubsub.close()


def test_every_key_is_prefixed_and_expires(
    redis_state: RedisState, redis_client: redis.Redis, redis_prefix: str
) -> None:
    redis_state.init_budget("inv", max_hops=1, max_retrieval_calls=1, max_llm_tokens=1, deadline_ts=0)
    redis_state.first_seen("inv", 1, ["h"])
    redis_state.store_hits("inv", 1, "s", SlotHits(query="q", engine="bm25"))
    redis_state.store_hits("inv", 2, "s", SlotHits(query="q", engine="bm25"))
    redis_state.first_seen("inv2", 1, ["h"])
    _cache(redis_state, CacheQuery("acme", "lexical", "q", 1, None), [], version=0)
    redis_state.once("k")
    keys = _keys(redis_client, redis_prefix)
    assert len(keys) == 10  # and the writer's parked hits
    assert all(k.startswith(f"{redis_prefix}:") for k in keys)
    # an investigation's state never outlives a day
    assert all(0 < redis_client.ttl(k) <= 86_400 for k in keys)


def test_a_client_without_decoding_works_the_same(redis_py_url: str, redis_prefix: str) -> None:
    state = RedisState(client_from_url(redis_py_url), redis_prefix)
    state.init_budget("inv", max_hops=1, max_retrieval_calls=1, max_llm_tokens=1, deadline_ts=1.0)
    assert state.charge("inv", "hops") and state.usage("inv")["hops"] == 1
    assert state.first_seen("inv", 1, ["x"]) == {"x"}
    hits = SlotHits(query="q", engine="bm25", passages=(_passage("a#0"),))
    state.store_hits("inv", 1, "s", hits)
    assert state.hop_results("inv", 1)[0] == {"s": hits}


def test_unreachable_redis_is_a_transient_error() -> None:
    client = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    state = RedisState(client, "t")
    assert not state.ping()
    with pytest.raises(TransientError):
        state.charge("inv", "hops")


def test_prefix_must_be_one_segment(redis_client: redis.Redis) -> None:
    with pytest.raises(ValueError):
        RedisState(redis_client, "a:b")


def test_the_shared_redis_urls_reach_one_server_from_kombu_celery_and_redis_py(
    redis_url: str, redis_py_url: str, redis_client: redis.Redis, redis_prefix: str
) -> None:
    from celery import Celery
    from kombu.connection import Connection

    redis_client.set(f"{redis_prefix}:probe", "here")
    with Connection(redis_url) as conn:
        assert conn.default_channel.client.get(f"{redis_prefix}:probe") in ("here", b"here")
    app = Celery("probe", broker=redis_url, backend=redis_url)
    try:
        assert app.backend.client.get(f"{redis_prefix}:probe") in ("here", b"here")
    finally:
        app.close()
    assert client_from_url(redis_py_url).get(f"{redis_prefix}:probe") == b"here"



def _commands(redis_state: RedisState, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The commands the client sends from now on (a round trip each), recorded in the list returned."""
    commands: list[object] = []
    execute: Callable[..., Any] = redis_state.client.execute_command

    def counted(*args: object, **kwargs: object) -> object:
        commands.append(args[0])
        return execute(*args, **kwargs)

    monkeypatch.setattr(redis_state.client, "execute_command", counted)
    return commands


def test_slots_begin_and_end_take_a_hops_slots_in_one_round_trip_each_slot_as_it_would_alone(
        redis_state: RedisState, monkeypatch: pytest.MonkeyPatch) -> None:
    """The inline executor's hop: several slots begin in ONE round trip, in order, each as alone (a parked
    slot gets its result and is not charged, the others are charged one call each until the budget runs
    out, a cached query is a hit), and end in one round trip (results parked, a MISS's passages cached)."""
    cache = CacheQuery(tenant="acme", engine="bm25", query="Which plan?", k=5, acl=None)
    vector = CacheQuery(tenant="acme", engine="vector", query="Which plan?", k=5, acl=None)
    other = CacheQuery(tenant="acme", engine="bm25", query="Who wrote it?", k=5, acl=None)
    found = SlotHits(query="Which plan?", engine="bm25", passages=(_passage("a#0"),))
    redis_state.init_budget("inv", max_hops=2, max_retrieval_calls=3, max_llm_tokens=0, deadline_ts=1000.0)
    redis_state.slots_end("inv", 1, [SlotEnd("0:bm25", found, cache, 0)], ttl=60)  # parked and cached
    execute: Callable[..., Any] = redis_state.client.execute_command
    commands = _commands(redis_state, monkeypatch)
    slots = [("0:bm25", cache), ("0:vector", vector), ("1:bm25", other), ("2:bm25", cache), ("3:bm25", cache)]
    begins = redis_state.slots_begin("inv", 1, slots, now=999.0)
    assert commands == ["EVALSHA"]  # one round trip for the five
    assert [b.outcome for b in begins] == [SlotOutcome.PARKED, SlotOutcome.MISS, SlotOutcome.MISS,
                                           SlotOutcome.HIT, SlotOutcome.BUDGET]
    assert begins[0].parked == found and begins[3].cached == list(found.passages)
    # the parked slot and the refused one: not charged
    assert redis_state.usage("inv")["retrieval_calls"] == 3
    monkeypatch.setattr(redis_state.client, "execute_command", execute)
    other_hits = SlotHits(query="Who wrote it?", engine="bm25", passages=(_passage("b#0"),))
    vector_hits = SlotHits(query="Which plan?", engine="vector", passages=(), error="ReadTimeout")
    pipelines: list[int] = []
    real_pipeline = redis_state.client.pipeline

    def pipeline(*args: Any, **kwargs: Any) -> Any:
        pipelines.append(1)
        return real_pipeline(*args, **kwargs)

    monkeypatch.setattr(redis_state.client, "pipeline", pipeline)
    redis_state.slots_end(
        "inv", 1, [SlotEnd("0:vector", vector_hits), SlotEnd("1:bm25", other_hits, other, 0)], ttl=60
    )
    assert pipelines == [1]  # one MULTI/EXEC round trip
    results, _usage = redis_state.hop_results("inv", 1)
    assert results == {"0:bm25": found, "0:vector": vector_hits, "1:bm25": other_hits}
    redis_state.init_budget("inv2", max_hops=2, max_retrieval_calls=9, max_llm_tokens=0, deadline_ts=1000.0)
    assert redis_state.slots_begin("inv2", 1, [("0:bm25", other)], now=999.0)[0].outcome is SlotOutcome.HIT
    assert redis_state.slots_begin("inv2", 1, [], now=999.0) == []
    with pytest.raises(ValueError, match="one tenant"):
        redis_state.slots_begin(
            "inv2", 1, [("0:bm25", cache), ("1:bm25", CacheQuery("beta", "bm25", "q", 5, None))], now=999.0
        )
    assert redis_state.usage("inv2")["retrieval_calls"] == 1  # nothing charged for the refused call


def test_slot_begin_checks_parked_deadline_and_budget_then_charges_and_reads_the_cache_in_one_round_trip(
        redis_state: RedisState, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = CacheQuery(tenant="acme", engine="bm25", query="Which plan?", k=5, acl=("scope", "acl:staff"))
    other = CacheQuery(tenant="acme", engine="bm25", query="Which plan?", k=5, acl=("scope", "acl:all"))
    redis_state.init_budget("inv", max_hops=2, max_retrieval_calls=3, max_llm_tokens=0, deadline_ts=1000.0)
    execute: Callable[..., Any] = redis_state.client.execute_command
    commands = _commands(redis_state, monkeypatch)
    begin = redis_state.slot_begin("inv", 1, "0:bm25", cache, now=999.0)
    assert begin == SlotBegin(SlotOutcome.MISS, None, None, 0)
    assert commands == ["EVALSHA"]  # one round trip
    monkeypatch.setattr(redis_state.client, "execute_command", execute)
    found = SlotHits(query="Which plan?", engine="bm25", passages=(_passage("a#0"),))
    redis_state.slots_end("inv", 1, [SlotEnd("0:bm25", found, cache, 0)], ttl=60)
    assert redis_state.load_hit("inv", 1, "0:bm25") == found
    # The same query and scope in another slot is a cache hit, charged; another scope is a miss.
    hit = redis_state.slot_begin("inv", 1, "1:bm25", cache, now=999.0)
    assert (hit.outcome, hit.cached) == (SlotOutcome.HIT, list(found.passages))
    assert redis_state.slot_begin("inv", 1, "2:bm25", other, now=999.0).outcome is SlotOutcome.MISS
    assert redis_state.usage("inv")["retrieval_calls"] == 3
    # Out of calls: nothing charged. A redelivered slot gets its parked result, whatever the budget or clock.
    assert redis_state.slot_begin("inv", 1, "3:bm25", cache, now=999.0).outcome is SlotOutcome.BUDGET
    again = redis_state.slot_begin("inv", 1, "0:bm25", cache, now=5000.0)
    assert (again.outcome, again.parked) == (SlotOutcome.PARKED, found)
    assert redis_state.usage("inv")["retrieval_calls"] == 3
    # Past the deadline, or no budget at all: "deadline", nothing charged.
    redis_state.init_budget("late", max_hops=2, max_retrieval_calls=3, max_llm_tokens=0, deadline_ts=1000.0)
    assert redis_state.slot_begin("late", 1, "0:bm25", cache, now=1000.5).outcome is SlotOutcome.DEADLINE
    assert redis_state.usage("late")["retrieval_calls"] == 0
    assert redis_state.slot_begin("none", 1, "0:bm25", cache, now=1.0).outcome is SlotOutcome.DEADLINE
    # An ingest (a new corpus version) makes the entry unreadable; hits searched before it are stored
    # under the version read before searching, so they stay unreadable too.
    current = dataclasses.replace(cache, version=1)  # the version a hop planned after the ingest reads
    redis_state.init_budget("inv2", max_hops=2, max_retrieval_calls=9, max_llm_tokens=0, deadline_ts=1000.0)
    after = redis_state.slot_begin("inv2", 1, "0:bm25", current, now=999.0)
    assert (after.outcome, after.version) == (SlotOutcome.MISS, 1)
    redis_state.slots_end("inv2", 1, [SlotEnd("0:bm25", found, cache, 0)], ttl=60)
    assert redis_state.slot_begin("inv2", 1, "1:bm25", current, now=999.0).outcome is SlotOutcome.MISS
    redis_state.slots_end("inv2", 1, [SlotEnd("1:bm25", found, current, 1)], ttl=0)  # ttl 0: not cached
    assert redis_state.slot_begin("inv2", 1, "2:bm25", current, now=999.0).outcome is SlotOutcome.MISS
    redis_state.slots_end("inv2", 1, [SlotEnd("2:bm25", found, current, 1)], ttl=60)
    assert redis_state.slot_begin("inv2", 1, "3:bm25", current, now=999.0).outcome is SlotOutcome.HIT
