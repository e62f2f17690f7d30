"""``/trace/{id}``: the human trace page (session cookie from /login or a `sleuth trace` link, which opens
only its own investigation; a Bearer key works too). No key ever goes in the URL."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from api import feedback_page, trace_page
from api.console_auth import visitor
from api.deps import ServicesDep
from api.routes import console
from api.routes.console import html, to_login
from app import feedback
from storage import repositories as repo

router = APIRouter(tags=["trace"])
# The sign-in, link, list and redeliver pages travel with the trace page (one include in the app).
router.include_router(console.router)


@router.get("/trace/{investigation_id}", response_class=HTMLResponse,
            responses={303: {"description": "Not signed in: to /login"}})
def trace_html(investigation_id: str, request: Request, services: ServicesDep) -> Response:
    """Summary (answer, why it stopped, citations → evidence, searches per hop, what was missing), then
    the details collapsed; live updates while the investigation runs."""
    found = visitor(request)
    if found is None or not found.may_open(investigation_id):
        return to_login(request)  # a link's session sees its own investigation only
    tenant = found.tenant
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=investigation_id, tenant_id=tenant.id)
        view = repo.investigation_view(session, investigation=inv)
        events = [repo.event_view(e) for e in repo.list_events(session, investigation_id=investigation_id)]
        question = inv.question
        ratings = repo.list_feedback(session, investigation_id=investigation_id, current_only=False)
        outcome = repo.get_outcome(session, investigation_id=investigation_id)
    links = (
        feedback.links_for(
            services, tenant_id=tenant.id, investigation_id=investigation_id, rater=f"console:{tenant.name}"
        )
        if inv.status in ("answered", "refused")
        else None
    )
    rated = feedback_page.ratings_section(ratings, links, outcome)
    csrf = found.session.csrf if found.session else None
    return html(trace_page.render(view, events, question, csrf=csrf, full=found.full, feedback=rated))
