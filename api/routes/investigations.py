"""``/v1/investigations``: intake (validate → persist → enqueue → 202), status, trace, live events."""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from sse_starlette.sse import AppStatus

from api.auth import PageTenantDep, TenantDep
from api.deps import FinishedDep, LauncherDep, RawBodyDep, ServicesDep
from api.finished import FinishedListener
from api.schemas import InvestigationCreate, InvestigationPublic, TracePublic
from api.sse import event_stream, resume_after
from app.intake import submit_investigation
from bootstrap import Services
from investigation.state import Status
from storage import repositories as repo

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/investigations", tags=["investigations"])

_CREATE_BODY = {
    "requestBody": {
        "required": True,
        # The schema itself is added to components by `api.app` (the body is parsed by hand, after
        # the size check, so FastAPI cannot infer it).
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/InvestigationCreate"}}},
    }
}


def parse_create(raw: bytes) -> InvestigationCreate:
    """Validate the raw JSON body; 422 naming every bad field (``loc`` starts with "body")."""
    try:
        return InvestigationCreate.model_validate_json(raw)
    except ValidationError as exc:
        errors = [{"loc": ["body", *err["loc"]], "msg": err["msg"], "type": err["type"]}
                  for err in exc.errors(include_url=False, include_context=False, include_input=False)]
        raise RequestValidationError(errors) from None


@router.post(
    "",
    status_code=202,
    response_model=InvestigationPublic,
    openapi_extra=_CREATE_BODY,
    responses={
        200: {"description": "Same Idempotency-Key: the existing investigation"},
        413: {"description": "Body too large"},
        422: {"description": "Invalid field"},
        503: {"description": "Could not enqueue (the investigation is marked failed)"},
    },
)
def create_investigation(
    tenant: TenantDep,
    raw: RawBodyDep,
    services: ServicesDep,
    launcher: LauncherDep,
    response: Response,
    idempotency_key: Annotated[
        str | None, Header(alias="Idempotency-Key", min_length=1, max_length=200)
    ] = None,
) -> dict[str, Any]:
    """Accept a question: 202 at once with the id; the answer comes by polling, SSE or the callback."""
    body = parse_create(raw)
    submitted = submit_investigation(services, tenant=tenant, request=body, launch=launcher,
                                     idempotency_key=idempotency_key)
    with services.session() as session:
        view = repo.investigation_view(session, investigation=repo.get_investigation(
            session, investigation_id=submitted.id, tenant_id=tenant.id))
    response.status_code = 202 if submitted.created else 200
    response.headers["location"] = f"/v1/investigations/{submitted.id}"
    return view


MAX_WAIT_SECONDS = 30.0  # under the usual 60 s idle timeout of proxies and load balancers
_clock = time.monotonic  # a long poll's deadline (tests stop it)


@router.get("/{investigation_id}", response_model=InvestigationPublic)
async def get_investigation(
    investigation_id: str,
    tenant: TenantDep,
    services: ServicesDep,
    finished: FinishedDep,
    wait: Annotated[float, Query(
        ge=0, le=MAX_WAIT_SECONDS,
        description="Long polling: hold the request up to this many seconds until the investigation is "
                    "terminal, then answer (at once when it already is; the view as it stands when the time "
                    "is up). 0: answer at once.")] = 0,
) -> Response:
    """The investigation as the public JSON (404 for ids of other tenants)."""
    if wait > 0:
        return JSONResponse(await _terminal_view(services, finished, investigation_id, tenant.id, wait))
    return JSONResponse(await run_in_threadpool(_view, services, investigation_id, tenant.id))


def _view(services: Services, investigation_id: str, tenant_id: str) -> dict[str, Any]:
    view = _view_if(services, investigation_id, tenant_id, terminal_only=False)
    assert view is not None  # not asked to be terminal
    return view


def _view_if(
    services: Services, investigation_id: str, tenant_id: str, *, terminal_only: bool
) -> dict[str, Any] | None:
    """The public view (None with `terminal_only` while the investigation runs)."""
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant_id)
        if terminal_only and not Status(inv.status).terminal:
            return None
        # Already the validated `InvestigationPublic` as JSON data: returned as a response, FastAPI does not
        # validate it a second time against the response model (the polled route: a good share of a GET).
        return repo.investigation_view(session, investigation=inv)


async def _terminal_view(
    services: Services, finished: FinishedListener, investigation_id: str, tenant_id: str, seconds: float
) -> dict[str, Any]:
    """The view once the investigation is terminal, or when `seconds` have passed (NotFound at once for
    another tenant's; terminal already: one read, as a plain GET). The request waits for the workers'
    announcement that the investigation finished (`api.finished`: one Redis subscription per API process), and
    reads the status when woken, every `FALLBACK_SECONDS` regardless, or every `POLL_SECONDS` while the
    process has no live subscription: a client polling costs the API a view per poll, and a status read on a
    fixed period here would delay every answer by half the period on average. The server shutting down ends
    the wait (sse-starlette's flag, set when uvicorn is told to exit, as it ends the SSE streams): the waiting
    requests get their answer instead of holding the shutdown for up to `MAX_WAIT_SECONDS`."""
    deadline = _clock() + seconds
    with finished.waiting(investigation_id) as notice:  # before the first read: no announcement is missed
        view = await run_in_threadpool(partial(_view_if, terminal_only=True), services, investigation_id,
                                       tenant_id)
        if view is not None:
            return view
        log.debug("waiting up to %.1f s for investigation %s", seconds, investigation_id)
        while (left := deadline - _clock()) > 0 and not AppStatus.should_exit:
            await notice.wait(min(notice.step, left))
            if Status(await run_in_threadpool(_status, services, investigation_id, tenant_id)).terminal:
                break
    return await run_in_threadpool(_view, services, investigation_id, tenant_id)


def _status(services: Services, investigation_id: str, tenant_id: str) -> str:
    with services.session() as session:
        return repo.investigation_status(session, investigation_id=investigation_id, tenant_id=tenant_id)


@router.get("/{investigation_id}/trace", response_model=TracePublic)
def get_trace(investigation_id: str, tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """Every trace event so far, in the order it was written."""
    with services.session() as session:
        repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant.id)
        events = [repo.event_view(e) for e in repo.list_events(session, investigation_id=investigation_id)]
    return {"id": investigation_id, "events": events}


@router.get("/{investigation_id}/events", response_class=EventSourceResponse,
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "`trace` events (id = event id), then one `end` event"}})
def stream_events(
    investigation_id: str,
    tenant: PageTenantDep,
    services: ServicesDep,
    finished: FinishedDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> EventSourceResponse:
    """Server-Sent Events: trace events as they are written, then ``end`` once the investigation is
    terminal and drained (woken by the workers' announcement, `api.sse`). ``Last-Event-ID`` resumes after
    that event."""
    with services.session() as session:
        repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant.id)
    after = resume_after(last_event_id)
    return EventSourceResponse(event_stream(services, investigation_id, after_id=after, finished=finished))
