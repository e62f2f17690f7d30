"""Live progress as Server-Sent Events: poll the trace table, emit new events, end when terminal."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi.concurrency import run_in_threadpool
from sse_starlette import ServerSentEvent

from investigation.state import Status
from storage import repositories as repo
from workers.wiring import Services

POLL_SECONDS = 0.2
TRACE_EVENT = "trace"
END_EVENT = "end"


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
                       poll_seconds: float = POLL_SECONDS) -> AsyncIterator[ServerSentEvent]:
    """``trace`` events (``id`` = trace event id, for ``Last-Event-ID``), then one ``end`` event.

    A client that goes away is noticed by sse-starlette, which cancels this generator.
    """
    last = after_id
    while True:
        status, events = await run_in_threadpool(_poll, services, investigation_id, last)
        for view in events:
            last = int(view["id"])
            yield ServerSentEvent(json.dumps(view, default=str), event=TRACE_EVENT, id=str(last))
        if not events:
            if _terminal(status):
                yield ServerSentEvent(json.dumps({"id": investigation_id, "status": status}),
                                      event=END_EVENT, id=str(last))
                return
            await asyncio.sleep(poll_seconds)
