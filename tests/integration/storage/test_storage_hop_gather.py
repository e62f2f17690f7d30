"""`RedisState.slots_end(gather=...)` and `slots_begin(charge_hop=...)` against a real Redis: what a hop's
reducer reads back, read by the round trip that parks the results; a hop's charge on its searches' round trip.
Each gives what the separate calls give (`hop_results`, `first_seen`, `charge_once`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from investigation.state import Passage
from storage.hits import SlotHits
from storage.redis_state import CacheQuery, RedisState, SlotEnd, SlotOutcome

PLAN = CacheQuery(tenant="acme", engine="bm25", query="Which plan?", k=5, acl=None)


def _passage(chunk_id: str) -> Passage:
    return Passage(chunk_id=chunk_id, source_id=chunk_id.split("#")[0], title="T", text="text", score=1.5,
                   engine="bm25", rank=1)


def _hits(*ids: str, engine: str = "bm25", query: str = "Which plan?") -> SlotHits:
    return SlotHits(query=query, engine=engine, passages=tuple(_passage(i) for i in ids), ms=2.5)


def _round_trips(state: RedisState, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    sent: list[str] = []
    execute: Callable[..., Any] = state.client.execute_command
    pipeline: Callable[..., Any] = state.client.pipeline

    def command(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(args[0]))
        return execute(*args, **kwargs)

    def piped(*args: Any, **kwargs: Any) -> Any:
        sent.append("pipeline")
        return pipeline(*args, **kwargs)

    monkeypatch.setattr(state.client, "execute_command", command)
    monkeypatch.setattr(state.client, "pipeline", piped)
    return sent


def _budget(state: RedisState, inv_id: str) -> None:
    state.init_budget(inv_id, max_hops=3, max_retrieval_calls=9, max_llm_tokens=0, deadline_ts=2e9)
    state.charge(inv_id, "retrieval_calls", 2)


def test_a_gathered_hop_is_what_its_reducer_would_read_back(
        redis_state: RedisState, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two investigations, one gathered and one read back as before, hop after hop: the same results, usage
    and first-seen passages; the gathered hop took one round trip."""
    for inv_id in ("gathered", "read"):
        _budget(redis_state, inv_id)
    parked = _hits("a#0", "b#0")  # a slot parked before (a redelivered hop): handed in, not parked again
    redis_state.store_hits("gathered", 1, "0:bm25", parked)
    redis_state.store_hits("read", 1, "0:bm25", parked)
    hops = {
        1: [
            SlotEnd("0:vector", _hits("b#0", "c#0", engine="vector"), PLAN, 0),
            SlotEnd("1:bm25", _hits(query="Who?")),
        ],
        2: [
            SlotEnd("0:bm25", _hits("c#0", "d#0", query="Then?")),
            SlotEnd("0:vector", _hits(engine="vector")),
        ],
    }
    for hop, ends in hops.items():
        before = {"0:bm25": parked} if hop == 1 else {}
        sent = _round_trips(redis_state, monkeypatch)
        gathered = redis_state.slots_end("gathered", hop, ends, ttl=60, gather=before)
        assert sent == ["pipeline"]  # the FIRST_SEEN script by its text: no SCRIPT EXISTS round trip first
        monkeypatch.undo()
        assert redis_state.slots_end("read", hop, ends, ttl=60) is None  # not gathering: nothing read
        hits, usage = redis_state.hop_results("read", hop)
        assert gathered is not None
        assert gathered.hits == hits and gathered.usage == usage
        assert list(gathered.candidates) == sorted({p.chunk_id for h in hits.values() for p in h.passages})
        fresh = redis_state.first_seen("read", hop, list(gathered.candidates))
        assert set(gathered.fresh) == fresh
        # A reducer that reads back after all (a fallback) gets the same answer for the hop.
        assert redis_state.first_seen("gathered", hop, list(gathered.candidates)) == fresh
    later = redis_state.slots_end("gathered", 3, [SlotEnd("0:bm25", _hits("a#0", "e#0"))], gather={})
    assert later is not None and later.fresh == {"e#0"}  # a#0 was seen at hop 1: not fresh at hop 3


def test_a_hop_that_found_nothing_is_gathered_without_the_first_seen_script(redis_state: RedisState) -> None:
    _budget(redis_state, "inv")
    gathered = redis_state.slots_end("inv", 1, [SlotEnd("0:bm25", _hits())], gather={})
    assert gathered is not None and gathered.candidates == () and gathered.fresh == frozenset()
    assert gathered.usage["retrieval_calls"] == 2


def test_a_result_that_does_not_read_back_as_itself_is_not_gathered(redis_state: RedisState) -> None:
    """Its stored form cannot be parsed (a lone surrogate): the reducer must see it as the missing result it
    is in Redis, so nothing is gathered and no passage is marked seen for it."""
    _budget(redis_state, "inv")
    broken = _hits("a#0", query="x " + chr(0xD800))
    assert redis_state.slots_end("inv", 1, [SlotEnd("0:bm25", broken)], gather={}) is None
    assert redis_state.hop_results("inv", 1)[0] == {}
    assert redis_state.first_seen("inv", 1, ["a#0"]) == {"a#0"}  # never marked before


def test_a_hops_charge_rides_on_its_searches_begin_once_per_marker(
        redis_state: RedisState, monkeypatch: pytest.MonkeyPatch) -> None:
    redis_state.init_budget("inv", max_hops=2, max_retrieval_calls=9, max_llm_tokens=0, deadline_ts=2e9)
    sent = _round_trips(redis_state, monkeypatch)
    begins = redis_state.slots_begin("inv", 1, [("0:bm25", PLAN)], now=1e9, charge_hop="inv:hop-charged:1")
    assert sent == ["EVALSHA"] and begins[0].outcome is SlotOutcome.MISS
    monkeypatch.undo()
    usage = redis_state.usage("inv")
    assert (usage["hops"], usage["retrieval_calls"]) == (1, 1)
    redis_state.slots_begin("inv", 1, [("1:bm25", PLAN)], now=1e9, charge_hop="inv:hop-charged:1")  # again
    assert not redis_state.charge_once("inv", "inv:hop-charged:1", "hops")  # … or from a step: used already
    assert redis_state.usage("inv")["hops"] == 1
    assert redis_state.charge_once("inv", "inv:hop-charged:2", "hops")  # a step charged hop 2 first
    redis_state.slots_begin("inv", 2, [("0:bm25", PLAN)], now=1e9, charge_hop="inv:hop-charged:2")
    assert redis_state.usage("inv")["hops"] == 2
    redis_state.slots_begin("inv", 3, [("0:bm25", PLAN)], now=1e9, charge_hop="inv:hop-charged:3")
    usage = redis_state.usage("inv")
    assert (usage["hops"], usage["retrieval_calls"]) == (2, 4)  # over max_hops: not charged; the searches are
    # No budget at all: no hop charged, the slots refused as before.
    assert redis_state.slots_begin("none", 1, [("0:bm25", PLAN)], now=1e9,
                                   charge_hop="none:hop-charged:1")[0].outcome is SlotOutcome.DEADLINE
    assert redis_state.usage("none")["hops"] == 0


def test_a_hops_results_are_parked_in_one_hset_and_read_back_each_as_itself(
        redis_state: RedisState, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every slot's result of a hop in ONE HSET (and one EXPIRE) of the hop's hash: each reads back as the
    result it was, another process's read (`hop_results` parsing the stored JSON) included."""
    queued: list[list[Any]] = []
    real = type(redis_state.client.pipeline())

    class Seen(real):  # type: ignore[misc, valid-type]
        def execute(self, *args: Any, **kwargs: Any) -> Any:
            queued.append([command[0][0] for command in self.command_stack])
            return super().execute(*args, **kwargs)

    monkeypatch.setattr(
        redis_state.client,
        "pipeline",
        lambda transaction=True: Seen(
            redis_state.client.connection_pool, redis_state.client.response_callbacks, transaction, None
        ),
    )
    ends = [SlotEnd(f"{i}:{engine}", _hits(f"{engine}{i}#0", engine=engine), None, 0)
            for i in range(2) for engine in ("bm25", "vector")]
    redis_state.slots_end("parked", 1, ends)
    assert queued == [["HSET", "EXPIRE"]]
    monkeypatch.undo()
    stored, _usage = redis_state.hop_results("parked", 1)
    assert stored == {end.slot: end.hits for end in ends}
    # … read by another process, which has not written them: parsed, the same results.
    other = RedisState(redis_state.client, redis_state.prefix)
    assert other.hop_results("parked", 1)[0] == stored
