"""Ratings: ``GET /r/{token}`` (the page a rating link opens; records nothing), ``POST /r/{token}`` (one press
records it: the page's own CSRF token and a same-origin check, no API key), and
``POST /v1/investigations/{id}/feedback`` with the API key."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from api import feedback_page, throttle
from api.auth import TenantDep
from api.console_auth import read_form, same_origin, session_tenant
from api.deps import ServicesDep
from api.routes.console import html, too_many
from app import feedback
from bootstrap import Services
from investigation.errors import TooManyRequests, ValidationFailed
from observability import feedback_metrics

log = logging.getLogger(__name__)
router = APIRouter()


def _open(request: Request, services: Services, token: str) -> feedback.RatingLink | str:
    """The verified link, or why not (a refusal counts as a failed attempt of this client)."""
    throttle.check(request)
    try:
        return feedback.open_link(services, token)
    except feedback.LinkRefused as exc:
        throttle.failed(request)
        return str(exc)


def _page(request: Request, link: feedback.RatingLink, token: str, *, chosen: str | None,
          recorded: str | None = None, error: str | None = None) -> str:
    inv = link.investigation
    # The answer only for someone signed in to this tenant who may open this investigation.
    signed_in = session_tenant(request, inv.id)
    readable = signed_in is not None and signed_in.id == inv.tenant_id
    return feedback_page.rating_page(action=f"/r/{quote(token, safe='.')}", csrf=link.csrf, chosen=chosen,
                                     investigation_id=inv.id, recorded=recorded, error=error,
                                     question=inv.question if readable else None,
                                     answer=inv.answer if readable else None)


@router.get("/r/{token}", include_in_schema=False)
def rating_form(token: str, request: Request, services: ServicesDep, rating: str | None = None) -> Response:
    """The rating page with `rating` chosen. Mail scanners open every link: nothing is recorded here."""
    try:
        opened = _open(request, services, token)
    except TooManyRequests as exc:
        return too_many(exc)
    if isinstance(opened, str):
        return html(feedback_page.refused_page(opened), status_code=403)
    chosen = rating if rating in feedback.RATINGS else None
    return html(_page(request, opened, token, chosen=chosen))


@router.post("/r/{token}", include_in_schema=False)
async def rate(token: str, request: Request, services: ServicesDep) -> Response:
    """One press: the rater's rating recorded (a repeated press replaces it; the history is kept)."""
    form = await read_form(request)
    try:
        opened = await run_in_threadpool(_open, request, services, token)
    except TooManyRequests as exc:
        return too_many(exc)
    if isinstance(opened, str):
        return html(feedback_page.refused_page(opened), status_code=403)
    if not same_origin(request) or not feedback.form_ok(services, token, form.get("csrf")):
        return html(feedback_page.refused_page("This form did not come from this site: open the link again."),
                    status_code=403)
    rating = form.get("rating", "")
    try:
        row = await run_in_threadpool(feedback.rate_with_link, services, opened, rating=rating,
                                      comment=form.get("comment"), correct_answer=form.get("correct_answer"))
    except feedback.LinkRefused as exc:
        return html(feedback_page.refused_page(str(exc)), status_code=403)
    except ValidationFailed as exc:
        page = _page(request, opened, token, chosen=rating if rating in feedback.RATINGS else None,
                     error=f"{exc.field.replace('_', ' ')}: {exc.message}")
        return html(page, status_code=422)
    feedback_metrics.record_rating(row.rating, opened.investigation.route, row.tenant_id, "link")
    log.info("rating recorded", extra={"investigation_id": row.investigation_id, "tenant_id": row.tenant_id})
    return html(_page(request, opened, token, chosen=row.rating, recorded=row.rating))


@router.post("/v1/investigations/{investigation_id}/feedback", status_code=201, tags=["feedback"],
             responses={404: {"description": "No such investigation (or another tenant's)"},
                        422: {"description": "Invalid field"}})
def rate_with_key(investigation_id: str, body: feedback.FeedbackCreate, tenant: TenantDep,
                  services: ServicesDep) -> dict[str, Any]:
    """Rate an answer with the tenant's API key: the rater's current rating becomes this one."""
    row, route = feedback.rate_with_key(services, tenant=tenant, investigation_id=investigation_id, body=body)
    feedback_metrics.record_rating(row.rating, route, tenant.id, "api")
    return feedback.feedback_view(row)
