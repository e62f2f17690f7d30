"""Request bodies arrive in time or not at all: an ASGI middleware that gives a request's body a deadline
(408 when it passes), and the handler that logs a client gone before its body arrived at INFO.

Without it a client that declares a Content-Length and sends less holds a worker coroutine for as long as
it keeps the connection open, and one that hangs up mid-body was an ERROR with a traceback.
"""

from __future__ import annotations

import asyncio
import logging

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)


class BodyTimedOut(HTTPException):
    """Raised (into the route reading the body) when a request's body did not arrive before its deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"the request body did not arrive within {seconds:g} seconds",
                         headers={"connection": "close"})


class BodyDeadline:
    """A request's ``http.request`` messages must all arrive within `seconds` of waiting for the client: only
    the time spent in `receive` counts, so a server slow to start reading (a loaded host, a slow database
    behind the authentication) never turns a client's prompt body into a 408. After the last message (or for
    anything else, such as waiting for a disconnect while streaming) no deadline applies. An HTTPException:
    FastAPI's body parsing re-raises it as it is, so every route answers 408."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        waited = 0.0
        whole = False

        async def timed_receive() -> Message:
            nonlocal whole, waited
            if whole:
                return await receive()
            started = loop.time()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, self.seconds - waited))
            except TimeoutError:
                log.info("%s %s: request body not received within %gs (408)", scope.get("method"),
                         scope.get("path"), self.seconds)
                raise BodyTimedOut(self.seconds) from None
            finally:
                waited += loop.time() - started
            whole = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        await self.app(scope, timed_receive, send)


async def client_gone(request: Request, exc: Exception) -> JSONResponse:
    """A client that disconnected before its body arrived: nobody will read the answer; an INFO line."""
    log.info("%s %s: client disconnected before sending its whole body", request.method, request.url.path)
    return JSONResponse({"detail": "client disconnected"}, 400, headers={"connection": "close"})


def install(app: FastAPI, seconds: float) -> None:
    """Give `app`'s request bodies `seconds` to arrive, and log a client gone mid-body at INFO."""
    app.add_middleware(BodyDeadline, seconds=seconds)
    app.add_exception_handler(ClientDisconnect, client_gone)
