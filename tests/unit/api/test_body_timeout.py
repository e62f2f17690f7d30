"""The body deadline counts only the time spent waiting for the client: a server slow to start reading is
never a 408, a body that never comes always is."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from api.body_timeout import BodyDeadline, BodyTimedOut

BODY = {"type": "http.request", "body": b"{}", "more_body": False}


def _run(*, app_delay: float, body_arrives: bool, seconds: float) -> list[Any]:
    """BodyDeadline around an app that waits `app_delay` before reading its body; what the app received."""
    received: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(app_delay)
        received.append(await receive())

    async def main() -> None:
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def receive() -> dict[str, Any]:
            if not body_arrives:
                await never
            return BODY

        async def send(message: Any) -> None:
            raise AssertionError("nothing is sent by the middleware itself")

        await BodyDeadline(app, seconds)({"type": "http", "method": "POST", "path": "/x"}, receive, send)

    asyncio.run(main())
    return received


def test_a_server_slow_to_read_does_not_spend_the_clients_time() -> None:
    # the app starts reading five times past the deadline; the body is there at once: no 408
    assert _run(app_delay=0.25, body_arrives=True, seconds=0.05) == [BODY]


def test_a_body_that_never_comes_is_timed_out() -> None:
    with pytest.raises(BodyTimedOut):
        _run(app_delay=0.0, body_arrives=False, seconds=0.05)
