"""``/v1/investigations``: intake (validate → persist → enqueue → 202), status, trace, live events."""

from __future__ import annotations

import ipaddress
import logging
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Header, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from sse_starlette import EventSourceResponse

from api.auth import PageTenantDep, TenantDep
from api.deps import LauncherDep, RawBodyDep, ServicesDep, SettingsDep
from api.errors import FieldError
from api.schemas import BudgetOverride, InvestigationCreate, InvestigationPublic, TracePublic
from api.sse import event_stream
from config.settings import Settings
from investigation.errors import TransientError
from investigation.state import Status, StopReason
from storage import repositories as repo

log = logging.getLogger(__name__)

router = APIRouter(prefix="/v1/investigations", tags=["investigations"])

BUDGET_FIELDS = ("max_hops", "max_retrieval_calls", "max_llm_tokens", "deadline_seconds")

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


def effective_budget(override: BudgetOverride | None, tenant_limits: dict[str, Any],
                     settings: Settings) -> dict[str, int]:
    """The investigation's budget: each limit is the server default, lowered by the tenant's limit, and
    lowered again by the request's override. An override above the cap is refused (422 naming it)."""
    budget: dict[str, int] = {}
    for name in BUDGET_FIELDS:
        cap = int(getattr(settings, name))
        tenant_cap = (tenant_limits or {}).get(name)
        if tenant_cap is not None:
            cap = min(cap, int(tenant_cap))
        asked = getattr(override, name) if override is not None else None
        if asked is not None and asked > cap:
            raise FieldError(("body", "budget", name), f"must be at most {cap} for this tenant")
        budget[name] = cap if asked is None else int(asked)
    return budget


def check_callback_host(url: str, settings: Settings) -> None:
    """Refuse loopback/private callback hosts unless ``settings.webhook_allow_private`` (SSRF guard)."""
    if settings.webhook_allow_private:
        return
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        raise FieldError(("body", "callback", "url"), "private or loopback hosts are not allowed")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return
    if not address.is_global:
        raise FieldError(("body", "callback", "url"), "private or loopback hosts are not allowed")


@router.post(
    "", status_code=202, response_model=InvestigationPublic, openapi_extra=_CREATE_BODY,
    responses={200: {"description": "Same Idempotency-Key: the existing investigation"},
               413: {"description": "Body too large"}, 422: {"description": "Invalid field"},
               503: {"description": "Could not enqueue (the investigation is marked failed)"}},
)
def create_investigation(
    tenant: TenantDep,
    raw: RawBodyDep,
    services: ServicesDep,
    settings: SettingsDep,
    launcher: LauncherDep,
    response: Response,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key", min_length=1, max_length=200)] = None,
) -> dict[str, Any]:
    """Accept a question: 202 at once with the id; the answer comes by polling, SSE or the callback."""
    body = parse_create(raw)
    budget = effective_budget(body.budget, tenant.limits, settings)
    callback = body.callback.model_dump(mode="json") if body.callback is not None else None
    if callback is not None:
        check_callback_host(callback["url"], settings)
    with services.session() as session:
        inv, created = repo.create_investigation(
            session, tenant=tenant, question=body.question, mode=body.mode, callback=callback,
            budget=budget, idempotency_key=idempotency_key, deadline_seconds=budget["deadline_seconds"])
        inv_id = inv.id
    if created:
        _enqueue(services, launcher, inv_id)
    with services.session() as session:
        view = repo.investigation_view(session, investigation=repo.get_investigation(
            session, investigation_id=inv_id, tenant_id=tenant.id))
    response.status_code = 202 if created else 200
    response.headers["location"] = f"/v1/investigations/{inv_id}"
    return view


def _enqueue(services: ServicesDep, launcher: LauncherDep, inv_id: str) -> None:
    """Hand the committed investigation to the queue; on failure mark it failed so nothing waits forever."""
    try:
        launcher(inv_id)
    except Exception as exc:
        log.exception("enqueue of investigation %s failed", inv_id)
        reason = f"enqueue failed: {type(exc).__name__}: {exc}"
        with services.session() as session:
            repo.finish_investigation(session, investigation_id=inv_id, status=Status.FAILED.value,
                                      stop_reason=StopReason.ERROR.value, error=reason)
        raise TransientError("the queue is unavailable; the investigation was marked failed") from exc


@router.get("/{investigation_id}", response_model=InvestigationPublic)
def get_investigation(investigation_id: str, tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """The investigation as the public JSON (404 for ids of other tenants)."""
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant.id)
        return repo.investigation_view(session, investigation=inv)


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
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> EventSourceResponse:
    """Server-Sent Events: trace events as they are written, then ``end`` once the investigation is
    terminal and drained. ``Last-Event-ID`` resumes after that event."""
    with services.session() as session:
        repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant.id)
    after = int(last_event_id) if last_event_id and last_event_id.strip().isdigit() else 0
    return EventSourceResponse(event_stream(services, investigation_id, after_id=after))
