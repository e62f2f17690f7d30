"""``/v1/hooks/{zendesk|freshdesk}/{channel_id}``: a helpdesk's new ticket starts an investigation; a later
update of that ticket records a rating tag and what the agent did with the draft (`app.outcomes`).

No API key: the request proves itself with the channel's signing secret (Zendesk) or inbound secret
(Freshdesk); see `app.hooks`. Bodies over ``SLEUTH_HOOK_MAX_BYTES`` are refused with 413 unread.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool

from api.deps import LauncherDep, ServicesDep
from api.errors import NotAuthenticated
from app import hooks
from app.intake import Submitted
from app.outcomes import Recorded
from investigation.errors import PayloadTooLarge
from observability import feedback_metrics

router = APIRouter(prefix="/v1/hooks", tags=["hooks"])

_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "A repeated event (the investigation it already started), or a ticket update: the "
                         "rating and draft outcome it recorded"},
    202: {"description": "An investigation was started; its answer goes back to the ticket"},
    401: {"description": "Bad, missing or stale signature / secret; nothing recorded"},
    404: {"description": "No such hook"},
    413: {"description": "Body or ticket text too large; nothing recorded"},
    422: {"description": "Malformed body; nothing recorded"},
}


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"hook body over {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"hook body over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _answer(submitted: Submitted | Recorded | None, response: Response) -> dict[str, Any]:
    if submitted is None or isinstance(submitted, Recorded) and submitted.investigation_id is None:
        response.status_code = 200
        return {"ignored": True}  # not an event that matters, or a ticket no investigation came from
    if isinstance(submitted, Recorded):
        response.status_code = 200
        for rating in submitted.ratings:
            feedback_metrics.record_rating(rating, submitted.route, submitted.tenant_id, "tag")
        return {"recorded": {"investigation_id": submitted.investigation_id, "ratings": submitted.ratings,
                             "outcome": submitted.outcome}}
    response.status_code = 202 if submitted.created else 200
    return {"id": submitted.id, "created": submitted.created}


@router.post("/zendesk/{channel_id}", status_code=202, responses=_RESPONSES)
async def zendesk_hook(channel_id: str, request: Request, response: Response, services: ServicesDep,
                       launcher: LauncherDep) -> dict[str, Any]:
    """A Zendesk webhook (event subscription ``ticket.created``, or a trigger with the documented body)."""
    raw = await _body(request, services.settings.limits.hook_max_bytes)
    headers = dict(request.headers.items())
    try:
        submitted = await run_in_threadpool(
            hooks.receive_zendesk, services, channel_id, headers, raw, launcher
        )
    except hooks.HookRejected as exc:
        raise NotAuthenticated(str(exc)) from None
    return _answer(submitted, response)


@router.post("/freshdesk/{channel_id}", status_code=202, responses=_RESPONSES)
async def freshdesk_hook(channel_id: str, request: Request, response: Response, services: ServicesDep,
                         launcher: LauncherDep) -> dict[str, Any]:
    """A Freshdesk automation webhook carrying ``X-Sleuth-Secret`` and the documented JSON body."""
    raw = await _body(request, services.settings.limits.hook_max_bytes)
    headers = dict(request.headers.items())
    try:
        submitted = await run_in_threadpool(
            hooks.receive_freshdesk, services, channel_id, headers, raw, launcher
        )
    except hooks.HookRejected as exc:
        raise NotAuthenticated(str(exc)) from None
    return _answer(submitted, response)
