"""In-flight fairness's common case in one Redis round trip (`app.admission._admitted_at_once`): a tenant with
nothing held, no decision under way and fewer admitted ids than its cap is admitted at once, without the lock
or the database. Everything else still goes the careful way, and the cap holds under concurrent intakes."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from app import admission
from app.intake import parse_request, submit_investigation
from storage import repositories as repo
from tests.integration.api.conftest import Api, Recorder, new_tenant


def _running(api: Api, tenant_id: str) -> set[str]:
    return set(admission._ids(api.services.redis.smembers(admission._running_key(api.services, tenant_id))))


def _held(api: Api, tenant_id: str) -> list[str]:
    return admission._ids(api.services.redis.lrange(admission._held_key(api.services, tenant_id), 0, -1))


def test_under_the_cap_an_intake_takes_neither_the_lock_nor_the_database(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant_id, key = new_tenant(api.services, limits={"max_in_flight": 2})

    def forbidden(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the common case must not take the careful way")

    monkeypatch.setattr(admission, "_lock", forbidden)
    monkeypatch.setattr(admission, "_running", forbidden)
    ids = [api.post({"question": f"question {i}?"}, key=key).json()["id"] for i in range(2)]
    assert api.launcher.calls == ids
    assert _running(api, tenant_id) == set(ids)
    assert tenant_id in admission.known_tenants(api.services)


def test_a_finished_one_still_listed_is_pruned_when_it_would_hold_the_next_back(api: Api) -> None:
    tenant_id, key = new_tenant(api.services, limits={"max_in_flight": 2})
    first, second = (api.post({"question": f"question {i}?"}, key=key).json()["id"] for i in range(2))
    for done in (first, second):  # finished, but their release was lost: both still listed
        with api.services.session() as session:
            repo.finish_investigation(
                session, investigation_id=done, status="answered", stop_reason="sufficient"
            )
    assert _running(api, tenant_id) == {first, second}
    third = api.post({"question": "question 2?"}, key=key).json()["id"]
    assert api.launcher.calls == [first, second, third]  # never leaked: pruned against the database
    assert _running(api, tenant_id) == {third}


@pytest.mark.parametrize("why", ["at the cap", "one held", "a decision under way"])
def test_the_one_round_trip_stands_aside(api: Api, why: str) -> None:
    tenant_id, _key = new_tenant(api.services, limits={"max_in_flight": 2})
    redis = api.services.redis
    lock = admission._lock(api.services, tenant_id)
    if why == "at the cap":
        redis.sadd(admission._running_key(api.services, tenant_id), "a", "b")
    elif why == "one held":
        redis.rpush(admission._held_key(api.services, tenant_id), "earlier")
    else:
        assert lock.acquire(blocking=False)
    try:
        before = _running(api, tenant_id)
        assert not admission._admitted_at_once(api.services, tenant_id, "next", 2)
        assert _running(api, tenant_id) == before  # nothing admitted: decided under the lock instead
    finally:
        if why == "a decision under way":
            lock.release()
    assert admission._admitted_at_once(api.services, tenant_id, "next", 3 if why == "at the cap" else 2) is (
        why != "one held")


def test_concurrent_intakes_never_run_more_than_the_cap(api: Api) -> None:
    tenant_id, _key = new_tenant(api.services, limits={"max_in_flight": 2})
    with api.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=tenant_id)
    launched = Recorder()
    ids: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def intake(i: int) -> None:
        try:
            start.wait()
            request = parse_request({"question": f"concurrent question {i}?"})
            ids.append(submit_investigation(api.services, tenant=tenant, request=request, launch=launched,
                                            rate_limit=False).id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=intake, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert len(ids) == 8
    assert len(launched.calls) == 2  # the cap, whichever way each intake went
    assert _running(api, tenant_id) == set(launched.calls)
    assert sorted(_held(api, tenant_id)) == sorted(set(ids) - set(launched.calls))


@pytest.mark.parametrize("in_process", [True, False])
def test_a_run_in_this_process_gives_its_slot_back_when_it_returns(api: Api, in_process: bool) -> None:
    """`in_process` (the inline executor: `launch` runs the investigation to its end): the slot is free again
    when the intake returns, and the next intake is admitted at once. A queued run keeps it until its
    terminal step gives it back (`admission.finished`)."""
    tenant_id, _key = new_tenant(api.services, limits={"max_in_flight": 1})
    with api.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=tenant_id)
    ran: list[str] = []

    def run_to_the_end(inv_id: str) -> None:
        assert _running(api, tenant_id) == {inv_id}  # it holds the slot while it runs
        ran.append(inv_id)
        with api.services.session() as session:
            repo.finish_investigation(
                session, investigation_id=inv_id, status="answered", stop_reason="sufficient"
            )

    first = submit_investigation(api.services, tenant=tenant, request=parse_request({"question": "first?"}),
                                 launch=run_to_the_end, rate_limit=False, in_process=in_process).id
    assert _running(api, tenant_id) == (set() if in_process else {first})
    assert admission._admitted_at_once(api.services, tenant_id, "next", 1) is in_process
