"""``/metrics``: every process's Prometheus metrics (multiprocess directory) plus scrape-time gauges."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool

from api.deps import ServicesDep
from api.errors import NotAuthenticated
from observability import exposition

router = APIRouter(tags=["operations"])


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}})
async def metrics(request: Request, services: ServicesDep) -> Response:
    """Prometheus metrics of the API and of the workers sharing its metrics directory (see
    docs/observability.md). With ``SLEUTH_METRICS_TOKEN`` set, a Bearer token is required; without it the
    metrics are served only by an API bound to loopback (``SLEUTH_API_HOST``/``--host``)."""
    settings = services.settings
    if not exposition.scrape_allowed(settings, request.headers.get("authorization", ""),
                                     bound_to=settings.api_host):
        raise NotAuthenticated(
            "metrics token required (SLEUTH_METRICS_TOKEN)"
            if settings.security.metrics_token
            else "set SLEUTH_METRICS_TOKEN to read the metrics of an API not bound to loopback"
        )
    body, content_type = await run_in_threadpool(
        lambda: exposition.render(exposition.registry(services.settings, services)))
    return Response(body, media_type=content_type)
