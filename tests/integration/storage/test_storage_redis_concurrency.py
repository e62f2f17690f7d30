"""Budgets and dedup under concurrency: threads and separate processes never overspend a limit and
never both claim the same passage."""

from __future__ import annotations

import multiprocessing
import random
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from storage.redis_state import RedisState, client_from_url

T = TypeVar("T")


def _together(n: int, work: Callable[[int], T]) -> list[T]:
    barrier = threading.Barrier(n)

    def run(i: int) -> T:
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(run, range(n)))


def test_threads_never_overspend_a_budget(redis_state: RedisState) -> None:
    redis_state.init_budget("inv", max_hops=3, max_retrieval_calls=100, max_llm_tokens=1000, deadline_ts=0)

    def spend(i: int) -> tuple[int, int]:
        rng = random.Random(i)
        calls = sum(redis_state.charge("inv", "retrieval_calls") for _ in range(25))
        tokens = 0
        for _ in range(25):
            amount = rng.randint(1, 40)
            tokens += amount if redis_state.charge("inv", "llm_tokens", amount) else 0
        return calls, tokens

    results = _together(16, spend)
    usage = redis_state.usage("inv")
    assert sum(c for c, _ in results) == usage["retrieval_calls"] == 100
    assert sum(t for _, t in results) == usage["llm_tokens"] <= 1000


def _spend_in_process(url: str, prefix: str, attempts: int) -> int:
    state = RedisState(client_from_url(url), prefix)
    return sum(state.charge("inv", "retrieval_calls") for _ in range(attempts))


def test_processes_never_overspend_a_budget(redis_state: RedisState, redis_py_url: str) -> None:
    redis_state.init_budget("inv", max_hops=1, max_retrieval_calls=150, max_llm_tokens=1, deadline_ts=0)
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        spent = pool.starmap(_spend_in_process, [(redis_py_url, redis_state.prefix, 60)] * 4)
    assert sum(spent) == redis_state.usage("inv")["retrieval_calls"] == 150


def test_tenant_tokens_never_exceed_the_daily_limit(redis_state: RedisState) -> None:
    charged = _together(
        12, lambda i: sum(7 for _ in range(20) if redis_state.charge_tenant_tokens("acme", 7, 500))
    )
    assert sum(charged) == redis_state.tenant_tokens_used("acme") <= 500
    assert redis_state.tenant_tokens_used("acme") > 500 - 7


def test_each_passage_is_first_seen_at_exactly_one_hop(redis_state: RedisState) -> None:
    hashes = [f"h{i}" for i in range(200)]

    def reduce_hop(hop: int) -> set[str]:
        mine = hashes[:]
        random.Random(hop).shuffle(mine)
        return redis_state.first_seen("inv", hop, mine)

    claims = _together(8, reduce_hop)
    assert sum(len(c) for c in claims) == len(hashes)
    assert set().union(*claims) == set(hashes)
    assert [reduce_hop(hop) for hop in range(8)] == claims  # each hop, reduced again, gets the same set


def test_once_has_one_winner(redis_state: RedisState) -> None:
    assert _together(16, lambda i: redis_state.once("deliver:msg_1")).count(True) == 1
