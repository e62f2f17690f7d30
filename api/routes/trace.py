"""``/trace/{id}``: the human-readable trace page (``?key=`` or Bearer auth, for a browser)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from api import trace_page
from api.auth import PageTenantDep
from api.deps import ServicesDep
from storage import repositories as repo

router = APIRouter(tags=["trace"])

# Self-contained and script-free: even a document smuggling markup past escaping could not run code.
_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",  # the page URL may carry ?key=
    "cache-control": "no-store",
}


@router.get("/trace/{investigation_id}", response_class=HTMLResponse)
def trace_html(investigation_id: str, tenant: PageTenantDep, services: ServicesDep) -> HTMLResponse:
    """Question, route, each hop's queries, retrievals, grades, decisions, answer and evidence."""
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant.id)
        view = repo.investigation_view(session, investigation=inv)
        events = [repo.event_view(e) for e in repo.list_events(session, investigation_id=investigation_id)]
        question = inv.question
    return HTMLResponse(trace_page.render(view, events, question), headers=_HEADERS)
