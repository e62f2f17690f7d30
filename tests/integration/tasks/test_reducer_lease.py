"""Two reducers of one hop never both advance the loop: real Redis for the lease, a real Celery worker
running two reducer messages of the same hop at once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from storage import repositories as repo
from tasks import steps
from tasks.claims import Claim, HopLease
from tests.support.stack import Stack, build_stack
from tests.support.wait import wait_until
from workers import names

# -- the lease itself (real Redis) -----------------------------------------------------------------------


def _key(prefix: str) -> str:
    return f"{prefix}:lease:reduce:inv-{uuid.uuid4().hex[:6]}:1"


def test_one_holder_at_a_time_and_the_others_stand_down(redis_client: redis.Redis, redis_prefix: str) -> None:
    key = _key(redis_prefix)
    with HopLease(redis_client, key, "a") as first:
        assert first.claim is Claim.ACQUIRED
        with HopLease(redis_client, key, "b") as second:
            assert second.claim is Claim.BUSY
        with HopLease(redis_client, key, "a") as again:  # the same message redelivered takes over
            assert again.claim is Claim.ACQUIRED
    with HopLease(redis_client, key, "b") as late:
        assert late.claim is Claim.OTHER_DONE  # a later duplicate: the hop was advanced already
    with HopLease(redis_client, key, "a") as redelivered:
        assert redelivered.claim is Claim.MINE_DONE  # the winner's own message again: follow the decision


def test_a_failed_holder_gives_the_hop_back(redis_client: redis.Redis, redis_prefix: str) -> None:
    key = _key(redis_prefix)
    with pytest.raises(RuntimeError), HopLease(redis_client, key, "a") as lease:
        assert lease.claim is Claim.ACQUIRED
        raise RuntimeError("the database went away")
    with HopLease(redis_client, key, "b") as other:
        assert other.claim is Claim.ACQUIRED


def test_a_dead_holder_lease_expires(redis_client: redis.Redis, redis_prefix: str) -> None:
    key = _key(redis_prefix)
    dead = HopLease(redis_client, key, "a", seconds=0.3)
    dead.__enter__()  # acquired, and its process "dies": the renewal stops, nothing is marked done
    dead._stop.set()
    assert HopLease(redis_client, key, "b").__enter__().claim is Claim.BUSY
    assert wait_until(lambda: redis_client.get(key) is None, timeout=30)
    with HopLease(redis_client, key, "b") as taker:
        assert taker.claim is Claim.ACQUIRED


# -- two reducer messages of one hop on a real worker ------------------------------------------------------


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[Stack]:
    built = build_stack(tmp_path / "home", redis_url, redis_prefix)
    try:
        yield built
    finally:
        built.stop_workers()


def _planned_and_retrieved(stack: Stack, question: str) -> str:
    with stack.services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=stack.tenant_name)
        inv, _ = repo.create_investigation(
            session,
            tenant=tenant,
            question=question,
            mode="agentic",
            callback=None,
            budget={},
            idempotency_key=None,
            deadline_seconds=120,
        )
    nxt = steps.start(stack.services, inv.id)
    assert nxt.kind == steps.NextKind.HOP
    for index, engine in nxt.slots:
        steps.retrieve(stack.services, inv.id, nxt.hop, index, engine)
    return inv.id


def test_two_reducers_of_one_hop_advance_the_loop_once(stack: Stack) -> None:
    from workers.app import create_celery

    inv_id = _planned_and_retrieved(
        stack, "Which plan includes SCIM provisioning, and what uptime does it guarantee?"
    )
    app = create_celery(stack.settings)
    # Two reducer messages of hop 1 (a chord that closed twice, a re-drive racing the original), queued
    # before the worker starts so its two processes take them together.
    # (The reducer stores no result in production; these two are sent asking for theirs, to read them.)
    sent = [app.send_task(names.T_REDUCE, args=([], inv_id, 1), ignore_result=False).id for _ in range(2)]
    stack.start_worker(concurrency=2)

    def outcomes() -> list[dict[str, Any]]:
        return [app.backend.get_task_meta(task_id) for task_id in sent]

    assert wait_until(lambda: all(m["status"] == "SUCCESS" for m in outcomes()), timeout=120), outcomes()
    results = [m["result"] for m in outcomes()]
    advanced = [r for r in results if r["kind"] != steps.NextKind.DONE]
    assert len(advanced) == 1, results
    view = stack.wait(inv_id, timeout=120)
    assert view["status"] in ("answered", "refused"), view
    with stack.services.session() as session:
        events = repo.list_events(session, investigation_id=inv_id)
        hops = repo.list_hops(session, investigation_id=inv_id)
    stood_down = [e.data for e in events if e.kind == "duplicate_reducer"]
    assert len(stood_down) == 1 and stood_down[0]["claim"] in (Claim.BUSY, Claim.OTHER_DONE), stood_down
    assert all(h.state == "reduced" for h in hops), [(h.number, h.state) for h in hops]
