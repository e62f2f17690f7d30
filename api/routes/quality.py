"""``/quality``, ``/quality.csv`` and ``/gaps``: the tenant's quality page, its figures as CSV, and its
knowledge
gaps (signed in like the other operator pages; a link's one-trace session may not open them)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from api import gaps_page, pages, quality_page
from api.console_auth import visitor
from api.deps import ServicesDep
from api.routes.console import html, to_login
from app.gaps import knowledge_gaps
from storage import repositories as repo
from storage.feedback_models import utcnow

router = APIRouter(include_in_schema=False)


def _report(services: ServicesDep, tenant_id: str, days: int) -> repo.QualityReport:
    until = utcnow()
    with services.session() as session:
        return repo.quality_report(
            session, tenant_id=tenant_id, since=until - timedelta(days=days), until=until
        )


@router.get("/quality")
def quality(
    request: Request, services: ServicesDep, days: Annotated[int, Query(ge=1, le=366)] = 30
) -> Response:
    found = visitor(request)
    if found is None or not found.full:
        return to_login(request)
    report = _report(services, found.tenant.id, days)
    csrf = found.session.csrf if found.session else None
    return html(quality_page.quality_page(found.tenant.name, report, days, csrf=csrf))


@router.get("/quality.csv")
def quality_csv(
    request: Request, services: ServicesDep, days: Annotated[int, Query(ge=1, le=366)] = 30
) -> Response:
    found = visitor(request)
    if found is None or not found.full:
        return to_login(request)
    body = quality_page.quality_csv(_report(services, found.tenant.id, days))
    return Response(
        body,
        media_type="text/csv; charset=utf-8",
        headers={**pages.HEADERS, "content-disposition": f'attachment; filename="quality-{days}d.csv"'},
    )


@router.get("/gaps")
def gaps(request: Request, services: ServicesDep, days: Annotated[int, Query(ge=1, le=366)] = 30) -> Response:
    found = visitor(request)
    if found is None or not found.full:
        return to_login(request)
    until = utcnow()
    with services.session() as session:
        report = knowledge_gaps(session, services.embedder, tenant_id=found.tenant.id,
                                since=until - timedelta(days=days), until=until)
    csrf = found.session.csrf if found.session else None
    return html(gaps_page.gaps_page(found.tenant.name, report, days, csrf=csrf))
