"""Wake the requests long-polling an investigation (`GET /v1/investigations/{id}?wait=`) when it turns
terminal.

A worker that moves an investigation to a terminal status announces it on one Redis channel of the
deployment (`RedisState.announce_finished`, sent by `tasks.celery_tasks._dispatch` right after the commit).
Each API process listens on that channel with one subscription, held by one daemon thread
(`FinishedListener`), and wakes the waiting requests of that investigation; a woken request reads the
status to be sure (a notice is a hint, the database is the truth).

A notice can be missed (the subscription dropped and came back, Redis restarted, a terminal move outside a
worker such as a failed enqueue): a request trusts the notices only while the subscription it registered
under is still the live one, and looks at the status itself every `FALLBACK_SECONDS` even then. Without a
live subscription (no Redis, reconnecting, the first request of a process while the thread subscribes) it
reads the status every `POLL_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

import redis

from bootstrap import Services
from investigation.errors import SleuthError

log = logging.getLogger(__name__)

POLL_SECONDS = 0.02  # a waiting request's look at the status while no subscription is live
FALLBACK_SECONDS = 0.5  # ... and while one is (a missed notice costs at most this)
LISTEN_SECONDS = 1.0  # the thread's longest block on the subscription (how soon it notices `stop`)
CLIENT_NAME = "sleuth-api-finished"
RECONNECT_SECONDS = (0.1, 5.0)  # first and longest pause before subscribing again after an error


class Notice:
    """One waiting request's registration: `wait` returns when its investigation is announced, or after
    `step` seconds (`FALLBACK_SECONDS` while the subscription it registered under is live, else
    `POLL_SECONDS`)."""

    def __init__(self, listener: FinishedListener, generation: int) -> None:
        self._listener = listener
        self._generation = generation
        self._event = asyncio.Event()
        self.loop = asyncio.get_running_loop()

    @property
    def trusted(self) -> bool:
        """Every announcement since this request registered reaches it (the subscription is the same one)."""
        return self._generation > 0 and self._listener.live_generation() == self._generation

    @property
    def step(self) -> float:
        return FALLBACK_SECONDS if self.trusted else POLL_SECONDS

    def set(self) -> None:
        self._event.set()

    async def wait(self, seconds: float) -> bool:
        """True when woken by an announcement (then cleared for the next wait), False when `seconds`
        passed."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout=seconds)
        except TimeoutError:
            return False
        self._event.clear()
        return True


class FinishedListener:
    """The API process's one subscription to the finished-investigations channel, and the requests waiting
    on each investigation. The thread starts with the first waiting request and stops with the app."""

    def __init__(self, services: Services) -> None:
        self._services = services
        self._lock = threading.Lock()
        self._waiters: dict[str, set[Notice]] = {}
        self._generation = 0  # how many times the thread has subscribed
        self._live = False  # subscribed now
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    # -- the requests' side (event loop) ---------------------------------------------------------------

    @contextlib.contextmanager
    def waiting(self, investigation_id: str) -> Iterator[Notice]:
        """Register a request waiting on `investigation_id` for as long as the block runs. Register before
        reading the status: an announcement after that read then always reaches the request."""
        self._ensure_started()
        notice = Notice(self, self.live_generation())
        with self._lock:
            self._waiters.setdefault(investigation_id, set()).add(notice)
        try:
            yield notice
        finally:
            with self._lock:
                waiting = self._waiters.get(investigation_id)
                if waiting is not None:
                    waiting.discard(notice)
                    if not waiting:
                        del self._waiters[investigation_id]

    def live_generation(self) -> int:
        """The number of the live subscription, 0 while there is none."""
        with self._lock:
            return self._generation if self._live else 0

    def waiting_count(self) -> int:
        with self._lock:
            return sum(len(w) for w in self._waiters.values())

    # -- the thread -------------------------------------------------------------------------------------

    def _ensure_started(self) -> None:
        if self._thread is not None or not self._services.settings.redis_url:
            return
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="sleuth-finished-listener", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        """End the thread (the app shutting down); waiting requests fall back to reading the status."""
        self._stop.set()
        self._wake(None)
        thread = self._thread
        if thread is not None:
            thread.join(LISTEN_SECONDS + 1)

    def _run(self) -> None:
        pause, longest = RECONNECT_SECONDS
        channel = self._services.state.finished_channel()
        client = self._client()  # its pool reconnects after an error
        while not self._stop.is_set():
            pubsub: Any = None
            try:
                pubsub = client.pubsub()
                pubsub.subscribe(channel)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=LISTEN_SECONDS)
                    if message is not None:
                        self._received(message)
                        pause = RECONNECT_SECONDS[0]
            except (redis.RedisError, OSError, SleuthError) as exc:
                log.warning(
                    "finished-investigations subscription lost (%s); waiting requests read the status "
                    "every %.2f s until it is back",
                    exc,
                    POLL_SECONDS,
                )
            finally:
                with self._lock:
                    was_live, self._live = self._live, False
                if was_live:  # each waiting request goes back to reading the status itself
                    self._wake(None)
                if pubsub is not None:
                    with contextlib.suppress(redis.RedisError, OSError):
                        pubsub.close()
            self._stop.wait(pause)
            pause = min(pause * 2, longest)
        client.close()

    def _client(self) -> redis.Redis:
        """A client of its own, named for `CLIENT LIST` (``sleuth-api-finished``)."""
        from storage.redis_state import client_from_url

        url = self._services.settings.redis_url
        assert url, "started only with a Redis URL"
        return client_from_url(url, client_name=CLIENT_NAME)

    def _received(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "subscribe":
            with self._lock:
                self._generation += 1
                self._live = True
            return
        if kind != "message":
            return
        data = message.get("data")
        self._wake(data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data))

    def _wake(self, investigation_id: str | None) -> None:
        """Wake the requests waiting on `investigation_id` (None: every waiting request)."""
        with self._lock:
            if investigation_id is None:
                notices = [n for waiting in self._waiters.values() for n in waiting]
            else:
                notices = list(self._waiters.get(investigation_id, ()))
        for notice in notices:
            with contextlib.suppress(RuntimeError):  # its event loop has closed: nobody waits any more
                notice.loop.call_soon_threadsafe(notice.set)
