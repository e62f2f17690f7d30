"""Operator pages: sign in (form → server-side session), sign out, a single-use link from `sleuth trace`,
the list of a tenant's investigations with status filters, and redelivery of dead deliveries from the
browser. Every form post is checked for origin and CSRF token; credential failures are attempt-limited."""

from __future__ import annotations

import logging
import math
import time
from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api import pages, session, throttle
from api.console_auth import (
    CSRF_FIELD,
    csrf_ok,
    end_session,
    login_csrf_ok,
    login_nonce,
    read_form,
    safe_next,
    same_origin,
    session_tenant,
    set_login_cookie,
    start_session,
    store,
    visitor,
)
from api.deps import RedelivererDep, ServicesDep
from api.source_pages import sources_section
from app.sources import list_sources
from investigation.errors import Forbidden, NotFound, TooManyRequests
from storage import repositories as repo
from storage._common import iso
from storage.console_sessions import SCOPE_CONSOLE, SCOPE_TRACE
from storage.models import Tenant

log = logging.getLogger(__name__)
router = APIRouter(include_in_schema=False)


def to_login(request: Request) -> RedirectResponse:
    """To the sign-in form, coming back here afterwards (an old ``?key=`` is dropped, never echoed)."""
    query = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "key"])
    target = request.url.path + (f"?{query}" if query else "")
    return RedirectResponse(f"/login?next={quote(target)}", status_code=303, headers=pages.HEADERS)


def html(body: str, status_code: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    return HTMLResponse(body, status_code=status_code, headers={**pages.HEADERS, **(headers or {})})


def refused(why: str) -> HTMLResponse:
    return html(pages.layout("Refused", f"<h1>Refused</h1><p>{pages.e(why)}</p>", signed_in=False),
                status_code=403)


def too_many(exc: TooManyRequests) -> HTMLResponse:
    wait = max(1, math.ceil(exc.retry_after))
    body = f"<h1>Too many attempts</h1><p>Too many failed sign-ins from here; try again in {wait} s.</p>"
    return html(pages.layout("Too many attempts", body, signed_in=False), status_code=429,
                headers={"retry-after": str(wait)})


def _login_form(
    request: Request, next_path: str, error: str | None = None, status_code: int = 200
) -> Response:
    """The sign-in form with its CSRF token, bound to the browser's pre-session cookie."""
    nonce = login_nonce(request)
    token = session.login_csrf(request.app.state.services.settings, nonce)
    response = html(pages.login_page(next_path, error, csrf=token), status_code=status_code)
    set_login_cookie(request, response, nonce)
    return response


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    return _login_form(request, safe_next(next))


@router.post("/login")
async def login(request: Request, services: ServicesDep) -> Response:
    form = await read_form(request)
    target = safe_next(form.get("next"))
    if not login_csrf_ok(request, form.get(CSRF_FIELD)):
        return refused("This sign-in form did not come from this site (or it is too old): reload it.")
    key = form.get("key", "").strip()
    try:
        await run_in_threadpool(throttle.check, request)
    except TooManyRequests as exc:
        return too_many(exc)

    def check() -> Tenant | None:
        with services.session() as db:
            try:
                return repo.authenticate(db, api_key=key)  # detached
            except Forbidden:
                return None

    tenant = await run_in_threadpool(check) if key else None
    if tenant is None:
        await run_in_threadpool(throttle.failed, request)
        return _login_form(request, target, "That API key is not valid.", status_code=401)
    response = RedirectResponse(target, status_code=303, headers=pages.HEADERS)
    await run_in_threadpool(start_session, request, response, tenant)
    response.delete_cookie(session.LOGIN_COOKIE, path="/login")
    log.info("operator signed in", extra={"tenant_id": tenant.id})
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = await read_form(request)
    found = await run_in_threadpool(visitor, request)
    if found is not None and found.session is None:
        found = None  # a Bearer key has no session to end
    if found is None:
        if not same_origin(request):
            return refused("Cross-site form.")
    elif not csrf_ok(request, found, form.get(CSRF_FIELD)):
        return refused("This form did not come from this site (or it is too old): reload the page.")
    response = RedirectResponse("/login", status_code=303, headers=pages.HEADERS)
    await run_in_threadpool(end_session, request, response)
    return response


def _open_link(request: Request, services: ServicesDep, token: str) -> tuple[Tenant, session.Claims] | str:
    """The link's tenant and claims, or why it cannot be used. Every refusal counts as a failed attempt."""
    claims = session.verify(session.secret_key(services.settings), token, kind="link")
    throttle.check(request, claims.tenant_id if claims else None)
    if claims is None or not claims.investigation_id or not claims.nonce:
        throttle.failed(request)
        return "This link has expired; sign in with the API key, or run `sleuth trace ID` again."
    with services.session() as db:
        try:
            tenant: Tenant | None = Tenant.model_validate(
                repo.get_tenant(db, tenant_id=claims.tenant_id).model_dump()
            )
        except NotFound:
            tenant = None
    if tenant is None or session.key_tag(tenant.api_key_hash) != claims.key_tag:
        throttle.failed(request, claims.tenant_id)
        return "This link is no longer valid."
    # The used mark outlives the link, so a replay within the link's lifetime always finds it.
    remaining = math.ceil(claims.expires - time.time()) + 60
    if not store(request).consume_link(claims.nonce, remaining):
        throttle.failed(request, claims.tenant_id)
        return "This link was already used; links work once. Run `sleuth trace ID` for a new one."
    return tenant, claims


@router.get("/link/{token}")
def signed_link(token: str, request: Request, services: ServicesDep) -> Response:
    """A `sleuth trace` link: valid for minutes, once; it opens a short session (one investigation's
    trace, read-only, unless made with ``--console``) and moves the browser on to a URL with no secret."""
    try:
        opened = _open_link(request, services, token)
    except TooManyRequests as exc:
        return too_many(exc)
    if isinstance(opened, str):
        return _login_form(request, "/investigations", opened, status_code=401)
    tenant, claims = opened
    assert claims.investigation_id is not None  # checked by _open_link
    response = RedirectResponse(f"/trace/{quote(claims.investigation_id)}", status_code=303,
                                headers=pages.HEADERS)
    scope = SCOPE_CONSOLE if claims.scope == SCOPE_CONSOLE else SCOPE_TRACE
    start_session(request, response, tenant, scope=scope, investigation_id=claims.investigation_id,
                  ttl_seconds=services.settings.security.link_session_ttl_seconds)
    log.info("operator signed in with a link", extra={"tenant_id": tenant.id, "scope": scope})
    return response


@router.get("/investigations", response_class=HTMLResponse)
def investigations_page(request: Request, services: ServicesDep,
                        status: Annotated[str | None, Query(max_length=20)] = None,
                        rating: Annotated[str | None, Query(max_length=20)] = None,
                        redelivered: Annotated[str | None, Query(max_length=60)] = None) -> Response:
    found = visitor(request)
    if found is None or not found.full:
        return to_login(request)
    tenant = found.tenant
    rating = rating if rating in pages.RATINGS else None
    status = status if status in pages.STATUSES and rating is None else None
    with services.session() as db:
        listed = (repo.list_rated(db, tenant_id=tenant.id, rating=rating) if rating
                  else repo.list_investigations(db, tenant_id=tenant.id, status=status))
        ratings = repo.rating_counts(db, investigation_ids=[i.id for i in listed])
        rows = [{"id": i.id, "status": i.status, "question": i.question, "route": i.route, "hops": i.hops,
                 "stop_reason": i.stop_reason, "created_at": (iso(i.created_at) or "")[:19].replace("T", " "),
                 "ratings": ratings.get(i.id)} for i in listed]
        counts = repo.count_investigations_by_status(db, tenant_id=tenant.id)
        rated = repo.count_rated(db, tenant_id=tenant.id)
        dead = [{"id": d.id, "channel": d.channel, "investigation_id": d.investigation_id,
                 "attempts": d.attempts, "last_error": d.last_error}
                for d in repo.list_dead_deliveries(db, tenant_id=tenant.id)]
    notice = f"Delivery {redelivered} is queued again." if redelivered else None
    csrf = found.session.csrf if found.session else None
    extra = sources_section(list_sources(services, tenant=tenant))
    return html(pages.list_page(tenant.name, rows, counts, dead, status=status, notice=notice, csrf=csrf,
                                extra=extra, rating=rating, rated=rated))


@router.post("/console/deliveries/{delivery_id}/redeliver")
async def redeliver_from_page(delivery_id: str, request: Request, services: ServicesDep,
                              redeliverer: RedelivererDep) -> Response:
    form = await read_form(request)
    found = await run_in_threadpool(visitor, request)
    if found is None:
        return to_login(request)
    if not found.full:
        return refused("This sign-in link opens one trace, read-only; sign in with the API key to act.")
    if not csrf_ok(request, found, form.get(CSRF_FIELD)):
        return refused("This form did not come from this site (or it is too old): reload the page.")

    def reset() -> None:
        with services.session() as db:
            repo.get_delivery(db, delivery_id=delivery_id, tenant_id=found.tenant.id)  # 404: another tenant's
            repo.reset_delivery(db, delivery_id=delivery_id)
        redeliverer(delivery_id)

    await run_in_threadpool(reset)
    log.info("delivery redelivered from the console", extra={"delivery_id": delivery_id})
    return RedirectResponse(f"/investigations?redelivered={quote(delivery_id)}#dead", status_code=303,
                            headers=pages.HEADERS)


__all__ = ["html", "router", "session_tenant", "to_login"]
