"""Long polling woken by the workers' announcement that an investigation finished (`api.finished`), on a
real Redis: the announcement answers a waiting request without it reading the status in between, another
investigation's announcement wakes nobody, and a lost subscription (its connection killed) or no Redis at
all sends the waiting requests back to reading the status themselves. No timing in the tests: the route's
clock is stopped and the fallback set far out, so a request answers only by what the test is about."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import pytest
import redis

from api import finished as finished_module
from api.finished import CLIENT_NAME, FinishedListener
from bootstrap import Services
from config.settings import Settings
from storage import repositories as repo
from tests.integration.api.conftest import Api
from tests.support.wait import wait_until


def _create(api: Api) -> str:
    response = api.post({"question": "Which region keeps data in Germany?"})
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def _finish(api: Api, inv_id: str) -> None:
    with api.services.session() as session:
        repo.finish_investigation(
            session,
            investigation_id=inv_id,
            status="answered",
            stop_reason="sufficient",
            answer="Frankfurt [1].",
            citations=[{"marker": 1, "evidence_id": "e1", "source_id": "frankfurt", "title": "F"}],
        )


def _listener(api: Api) -> FinishedListener:
    listener: FinishedListener = api.client.app.state.finished  # type: ignore[attr-defined]
    return listener


def _live(api: Api) -> FinishedListener:
    """The app's listener, subscribed."""
    listener = _listener(api)
    listener._ensure_started()
    assert wait_until(lambda: listener.live_generation() > 0, timeout=30, interval=0.01)
    return listener


class _Watched:
    """Counts the route's status reads (`read_again` is set by each), tells when its first read (the view,
    unfinished) is done, and stops the route's clock: a waiting request never reaches its deadline, so only a
    notice or a status read of its own can answer it (`FALLBACK_SECONDS` set far out: only a notice)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from api.routes import investigations as route

        self.looks: list[str] = []
        self.first_read = threading.Event()
        self.read_again = threading.Event()
        status, view_if = route._status, route._view_if

        def counted(*args: Any) -> str:
            self.looks.append(args[1])
            self.read_again.set()
            return status(*args)

        def first(*args: Any, **kwargs: Any) -> Any:
            try:
                return view_if(*args, **kwargs)
            finally:
                self.first_read.set()

        monkeypatch.setattr(route, "_status", counted)
        monkeypatch.setattr(route, "_view_if", first)
        monkeypatch.setattr(route, "_clock", lambda: 0.0)
        monkeypatch.setattr(finished_module, "FALLBACK_SECONDS", 1e6)


def _get_while(api: Api, inv_id: str, then: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """GET `?wait=30` while `then()` runs in another thread: the response, and what went wrong in `then`. A
    request still waiting 30 s after `then` returned is released as a shutdown would (that is reported: the
    test fails instead of hanging)."""
    from sse_starlette.sse import AppStatus

    problems: list[str] = []
    answered = threading.Event()

    def run() -> None:
        try:
            then()
        except AssertionError as exc:
            problems.append(f"{exc!r}")
        if not answered.wait(30):
            problems.append("the request was still waiting 30 s later")
            monkeypatch.setattr(AppStatus, "should_exit", True)
            _listener(api).stop()

    other = threading.Thread(target=run)
    other.start()
    try:
        response = api.client.get(f"/v1/investigations/{inv_id}", params={"wait": 30}, headers=api.auth())
        answered.set()
        return response, problems
    finally:
        other.join()


def test_an_announcement_answers_the_waiting_request_without_a_status_read_in_between(
        api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    _live(api)
    inv_id = _create(api)
    watched = _Watched(monkeypatch)

    def finish_and_announce() -> None:
        assert watched.first_read.wait(30)
        _finish(api, inv_id)
        api.services.state.announce_finished(inv_id)

    response, problems = _get_while(api, inv_id, finish_and_announce, monkeypatch)
    assert problems == []
    assert response.status_code == 200 and response.json()["status"] == "answered", response.text
    assert watched.looks == [inv_id]  # woken once, read once
    assert _listener(api).waiting_count() == 0


def test_another_investigations_announcement_wakes_nobody(api: Api) -> None:
    listener = _live(api)

    async def waiting() -> tuple[bool, bool]:
        with listener.waiting("inv-a") as a, listener.waiting("inv-b") as b:
            assert a.trusted and b.trusted
            listener._received({"type": "message", "data": b"inv-b"})
            woken_b = await b.wait(30)
            return woken_b, a._event.is_set()  # a's wake-up would have run before b's

    assert asyncio.run(waiting()) == (True, False)
    assert listener.waiting_count() == 0


def test_the_worker_side_announcement_reaches_the_listener_through_redis(api: Api) -> None:
    listener = _live(api)

    async def waiting() -> bool:
        with listener.waiting("inv-announced") as notice:
            await asyncio.to_thread(api.services.state.announce_finished, "inv-announced")
            return await notice.wait(30)

    assert asyncio.run(waiting()) is True


def _kill_listener_connections(client: redis.Redis, name: str) -> int:
    killed = 0
    for entry in client.client_list():
        if entry.get("name") == name:
            client.client_kill_filter(_id=entry["id"])
            killed += 1
    return killed


def test_a_lost_subscription_sends_waiting_requests_back_to_reading_the_status(
        api: Api, monkeypatch: pytest.MonkeyPatch, redis_client: redis.Redis) -> None:
    """The subscription's connection is killed while a request waits: the request is woken and reads the
    status (once the subscription is back it no longer trusts it: notices in between were lost). The
    investigation then finishes with no announcement: the request still answers, by reading the status.
    The listener gets a name of its own: the test kills its connections only, never those of the listeners of
    tests running at the same time in other processes against the same Redis (their exact counts of status
    reads would be thrown off)."""
    name = f"{CLIENT_NAME}-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(finished_module, "CLIENT_NAME", name)
    listener = _live(api)
    generation = listener.live_generation()
    inv_id = _create(api)
    watched = _Watched(monkeypatch)

    def kill_then_finish_quietly() -> None:
        assert watched.first_read.wait(30)
        assert wait_until(lambda: listener.waiting_count() == 1, timeout=30, interval=0.01)
        assert _kill_listener_connections(redis_client, name) >= 1
        assert watched.read_again.wait(30), "not woken by the lost subscription"
        assert wait_until(lambda: listener.live_generation() > generation, timeout=30, interval=0.01)
        # it keeps reading: a wait begun before the new subscription ends in one read at most
        for _ in range(2):
            watched.read_again.clear()
            assert watched.read_again.wait(30), "no longer reading the status once subscribed again"
        _finish(api, inv_id)

    response, problems = _get_while(api, inv_id, kill_then_finish_quietly, monkeypatch)
    assert problems == []
    assert response.status_code == 200 and response.json()["status"] == "answered", response.text
    assert len(watched.looks) >= 2


def test_a_stopping_listener_wakes_its_waiting_requests_to_read_the_status(api: Api) -> None:
    listener = _live(api)

    async def waiting() -> tuple[bool, float]:
        with listener.waiting("inv-stop") as notice:
            await asyncio.to_thread(listener.stop)
            return await notice.wait(30), notice.step

    woken, step = asyncio.run(waiting())
    assert woken and step == finished_module.POLL_SECONDS
    assert listener.live_generation() == 0


def test_without_redis_a_waiting_request_reads_the_status_every_poll_step(tmp_path: Any) -> None:
    services = Services(Settings(home=tmp_path, redis_url=None))
    listener = FinishedListener(services)

    async def waiting() -> tuple[bool, float]:
        with listener.waiting("inv-x") as notice:
            return notice.trusted, notice.step

    assert asyncio.run(waiting()) == (False, finished_module.POLL_SECONDS)
    assert listener._thread is None  # nothing to subscribe to


@pytest.mark.timeout(60)
def test_an_announcement_ends_the_event_stream_without_waiting_out_its_poll(
        api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SSE stream's pause between polls is set far out: after its first poll (the investigation still
    running) only the announcement can make it read again, and the `end` event follows that one read."""
    from api import sse

    listener = _live(api)
    inv_id = _create(api)
    polls: list[str] = []
    first_poll = threading.Event()
    poll = sse._poll

    def counted(*args: Any) -> Any:
        try:
            return poll(*args)
        finally:
            polls.append(args[1])
            first_poll.set()

    monkeypatch.setattr(sse, "_poll", counted)
    monkeypatch.setattr(sse, "POLL_SECONDS", 1e6)
    problems: list[str] = []

    def finish_and_announce() -> None:
        if not first_poll.wait(30):
            problems.append("the stream never polled")
        _finish(api, inv_id)
        api.services.state.announce_finished(inv_id)

    other = threading.Thread(target=finish_and_announce)
    other.start()
    events: list[str] = []
    with api.client.stream("GET", f"/v1/investigations/{inv_id}/events", headers=api.auth()) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event:"):
                events.append(line.partition(":")[2].strip())
                if events[-1] == "end":
                    break
    other.join()
    assert problems == []
    assert events == ["end"]
    assert polls == [inv_id, inv_id]  # the first (running), then the one the announcement asked for
    assert wait_until(lambda: listener.waiting_count() == 0, timeout=30, interval=0.01)
