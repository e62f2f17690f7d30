"""Request-scoped dependencies: the process `Services`, the enqueue hooks, the limited request body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request

from api.finished import FinishedListener
from bootstrap import Services
from config.settings import Settings
from investigation.errors import PayloadTooLarge


def get_services(request: Request) -> Services:
    """The `Services` the app was built with (one per API process)."""
    services: Services = request.app.state.services
    return services


def get_settings(request: Request) -> Settings:
    return get_services(request).settings


def get_finished(request: Request) -> FinishedListener:
    """The process's listener for investigations turning terminal (wakes `?wait=` requests)."""
    listener: FinishedListener = request.app.state.finished
    return listener


def get_launcher(request: Request) -> Callable[[str], None]:
    """`launcher(investigation_id)` enqueues an investigation's workflow."""
    launcher: Callable[[str], None] = request.app.state.launcher
    return launcher


def get_redeliverer(request: Request) -> Callable[[str], None]:
    """`redeliverer(delivery_id)` enqueues one delivery attempt."""
    redeliverer: Callable[[str], None] = request.app.state.redeliverer
    return redeliverer


async def limited_body(request: Request) -> bytes:
    """The raw body, refused with 413 as soon as it exceeds ``settings.limits.max_question_bytes``.

    Checked before any parsing: a declared Content-Length over the limit is refused without reading,
    and a chunked body is read only up to the limit.
    """
    limit = get_settings(request).limits.max_question_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


ServicesDep = Annotated[Services, Depends(get_services)]
FinishedDep = Annotated[FinishedListener, Depends(get_finished)]
LauncherDep = Annotated[Callable[[str], None], Depends(get_launcher)]
RedelivererDep = Annotated[Callable[[str], None], Depends(get_redeliverer)]
RawBodyDep = Annotated[bytes, Depends(limited_body)]
