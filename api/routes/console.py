"""Operator pages: sign in (form → session cookie), a signed link from `sleuth trace ID`, the list of a
tenant's investigations with status filters, and redelivery of dead deliveries from the browser."""

from __future__ import annotations

import logging
from typing import Annotated
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api import pages, session
from api.console_auth import end_session, safe_next, same_origin, session_tenant, start_session
from api.deps import RedelivererDep, ServicesDep
from investigation.errors import Forbidden, NotFound
from storage import repositories as repo
from storage._common import iso
from storage.models import Tenant

log = logging.getLogger(__name__)
router = APIRouter(include_in_schema=False)
MAX_FORM_BYTES = 4096


def to_login(request: Request) -> RedirectResponse:
    """To the sign-in form, coming back here afterwards (an old ``?key=`` is dropped, never echoed)."""
    query = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "key"])
    target = request.url.path + (f"?{query}" if query else "")
    return RedirectResponse(f"/login?next={quote(target)}", status_code=303, headers=pages.HEADERS)


def html(body: str, status_code: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status_code, headers=pages.HEADERS)


@router.get("/login")
def login_form(next: str | None = None) -> HTMLResponse:
    return html(pages.login_page(safe_next(next)))


@router.post("/login")
async def login(request: Request, services: ServicesDep) -> Response:
    raw = await request.body()
    form = parse_qs(raw[:MAX_FORM_BYTES].decode("utf-8", "replace"))
    key = (form.get("key") or [""])[0].strip()
    target = safe_next((form.get("next") or [""])[0])

    def check() -> Tenant | None:
        with services.session() as db:
            try:
                return repo.authenticate(db, api_key=key)  # detached
            except Forbidden:
                return None

    tenant = await run_in_threadpool(check) if key else None
    if tenant is None:
        return html(pages.login_page(target, "That API key is not valid."), status_code=401)
    response = RedirectResponse(target, status_code=303, headers=pages.HEADERS)
    start_session(request, response, tenant)
    log.info("operator signed in", extra={"tenant_id": tenant.id})
    return response


@router.post("/logout")
def logout() -> Response:
    response = RedirectResponse("/login", status_code=303, headers=pages.HEADERS)
    end_session(response)
    return response


@router.get("/link/{token}")
def signed_link(token: str, request: Request, services: ServicesDep) -> Response:
    """A `sleuth trace` link: valid for minutes, for one investigation; it becomes a session cookie and
    the browser moves on to a URL that holds no secret."""
    claims = session.verify(session.secret_key(services.settings), token, kind="link")
    if claims is None or not claims.investigation_id:
        return html(pages.login_page("/investigations", "This link has expired; sign in with the API key."),
                    status_code=401)
    with services.session() as db:
        try:
            tenant = Tenant.model_validate(repo.get_tenant(db, tenant_id=claims.tenant_id).model_dump())
        except NotFound:
            tenant = None
    if tenant is None or session.key_tag(tenant.api_key_hash) != claims.key_tag:
        return html(pages.login_page("/investigations", "This link is no longer valid."), status_code=401)
    response = RedirectResponse(f"/trace/{quote(claims.investigation_id)}", status_code=303,
                                headers=pages.HEADERS)
    start_session(request, response, tenant)
    return response


@router.get("/investigations", response_class=HTMLResponse)
def investigations_page(request: Request, services: ServicesDep,
                        status: Annotated[str | None, Query(max_length=20)] = None,
                        redelivered: Annotated[str | None, Query(max_length=60)] = None) -> Response:
    tenant = session_tenant(request)
    if tenant is None:
        return to_login(request)
    status = status if status in pages.STATUSES else None
    with services.session() as db:
        rows = [{"id": i.id, "status": i.status, "question": i.question, "route": i.route, "hops": i.hops,
                 "stop_reason": i.stop_reason, "created_at": (iso(i.created_at) or "")[:19].replace("T", " ")}
                for i in repo.list_investigations(db, tenant_id=tenant.id, status=status)]
        counts = repo.count_investigations_by_status(db, tenant_id=tenant.id)
        dead = [{"id": d.id, "channel": d.channel, "investigation_id": d.investigation_id,
                 "attempts": d.attempts, "last_error": d.last_error}
                for d in repo.list_dead_deliveries(db, tenant_id=tenant.id)]
    notice = f"Delivery {redelivered} is queued again." if redelivered else None
    return html(pages.list_page(tenant.name, rows, counts, dead, status=status, notice=notice))


@router.post("/console/deliveries/{delivery_id}/redeliver")
def redeliver_from_page(delivery_id: str, request: Request, services: ServicesDep,
                        redeliverer: RedelivererDep) -> Response:
    tenant = session_tenant(request)
    if tenant is None:
        return to_login(request)
    if not same_origin(request):
        return html(pages.layout("Refused", "<h1>Refused</h1><p>Cross-site form.</p>"), status_code=403)
    with services.session() as db:
        repo.get_delivery(db, delivery_id=delivery_id, tenant_id=tenant.id)  # 404 for another tenant's
        repo.reset_delivery(db, delivery_id=delivery_id)
    redeliverer(delivery_id)
    log.info("delivery redelivered from the console", extra={"delivery_id": delivery_id})
    return RedirectResponse(f"/investigations?redelivered={quote(delivery_id)}#dead", status_code=303,
                            headers=pages.HEADERS)
