"""Live progress as Server-Sent Events: poll the trace table, emit new events, end when terminal.

Between polls the stream waits `POLL_SECONDS`, or less: the workers' announcement that the investigation
finished (`api.finished`, the subscription the long polls use) wakes it at once, so the ``end`` event
follows the terminal status within a poll of the database instead of up to `POLL_SECONDS` later.

While the answer is being written, its tokens arrive on the investigation's Redis progress channel and
are relayed as `token` events (a draft preview: the delivered answer is the `synthesis` trace event,
after its citations were checked). Without Redis, only trace events are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import redis
from fastapi.concurrency import run_in_threadpool
from sse_starlette import ServerSentEvent

from api.finished import FinishedListener
from bootstrap import Services
from investigation.errors import PermanentError, SleuthError
from investigation.state import Status
from storage import repositories as repo

POLL_SECONDS = 0.2
TRACE_EVENT = "trace"
END_EVENT = "end"
TOKEN_EVENT = "token"
_TOKEN_TYPES = ("token", "token_reset")
# Trace event ids are an INTEGER column: 32 bits in PostgreSQL, which refuses a larger number outright.
MAX_EVENT_ID = 2**31 - 1


def resume_after(last_event_id: str | None) -> int:
    """The trace event id a ``Last-Event-ID`` header resumes after: 0 (from the start) when there is none or
    it is not a number; PermanentError (400) for a number no event id can be, which the database would
    refuse."""
    text = (last_event_id or "").strip()
    if not (text.isascii() and text.isdigit()):
        return 0
    if len(text) > len(str(MAX_EVENT_ID)) or int(text) > MAX_EVENT_ID:
        raise PermanentError(f"Last-Event-ID is over {MAX_EVENT_ID}: not an event id")
    return int(text)


def _subscribe(services: Services, investigation_id: str) -> Any:
    """A subscription to the investigation's progress channel, or None when Redis is not there."""
    try:
        pubsub = services.redis.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(services.state.key("progress", investigation_id))
        return pubsub
    except (SleuthError, redis.RedisError, OSError):
        return None


def _drain(pubsub: Any, limit: int = 500) -> list[dict[str, Any]]:
    """The token events published since the last drain (never blocks)."""
    out: list[dict[str, Any]] = []
    try:
        while len(out) < limit:
            message = pubsub.get_message(timeout=0)
            if message is None:
                break
            if message.get("type") != "message":
                continue
            try:
                event = json.loads(message["data"])
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") in _TOKEN_TYPES:
                out.append(event)
    except (redis.RedisError, OSError):
        pass  # tokens are a preview; the trace events still arrive
    return out


def _close(pubsub: Any) -> None:
    try:
        pubsub.close()
    except (redis.RedisError, OSError):
        pass


def _poll(services: Services, investigation_id: str, after_id: int) -> tuple[str, list[dict[str, Any]]]:
    """The investigation's status, then the events written after `after_id` (in that order: an event
    written before the status turned terminal is always seen before we decide to end)."""
    with services.session() as session:
        status = repo.get_investigation(session, investigation_id=investigation_id).status
        events = [repo.event_view(e) for e in repo.list_events(
            session, investigation_id=investigation_id, after_id=after_id)]
    return status, events


def _terminal(status: str) -> bool:
    try:
        return Status(status).terminal
    except ValueError:
        return False


async def event_stream(services: Services, investigation_id: str, *, after_id: int = 0,
                       poll_seconds: float | None = None,
                       finished: FinishedListener | None = None) -> AsyncIterator[ServerSentEvent]:
    """``trace`` events (``id`` = trace event id, for ``Last-Event-ID``), then one ``end`` event.

    A client that goes away is noticed by sse-starlette, which cancels this generator. With `finished`,
    the stream registers for the investigation's announcement before its first poll (none is missed) and
    a notice ends its wait early; a notice is only a hint: the stream ends when a poll reads the status.
    """
    last = after_id
    pause = POLL_SECONDS if poll_seconds is None else poll_seconds
    pubsub = await run_in_threadpool(_subscribe, services, investigation_id)
    waiting = finished.waiting(investigation_id) if finished is not None else contextlib.nullcontext(None)
    with waiting as notice:
        try:
            while True:
                status, events = await run_in_threadpool(_poll, services, investigation_id, last)
                for view in events:
                    last = int(view["id"])
                    yield ServerSentEvent(json.dumps(view, default=str), event=TRACE_EVENT, id=str(last))
                tokens = await run_in_threadpool(_drain, pubsub) if pubsub is not None else []
                for token in tokens:
                    yield ServerSentEvent(json.dumps(token), event=TOKEN_EVENT)
                if not events and not tokens:
                    if _terminal(status):
                        yield ServerSentEvent(json.dumps({"id": investigation_id, "status": status}),
                                              event=END_EVENT, id=str(last))
                        return
                    if notice is not None:
                        await notice.wait(pause)
                    else:
                        await asyncio.sleep(pause)
        finally:
            if pubsub is not None:
                await run_in_threadpool(_close, pubsub)
