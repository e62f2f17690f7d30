"""``/metrics``: every process's Prometheus metrics (multiprocess directory) plus scrape-time gauges."""

from __future__ import annotations

import hmac

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
    docs/observability.md). With ``SLEUTH_METRICS_TOKEN`` set, a Bearer token is required."""
    token = services.settings.metrics_token
    if token is not None:
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.get_secret_value().encode()):
            raise NotAuthenticated("metrics token required")
    body, content_type = await run_in_threadpool(
        lambda: exposition.render(exposition.registry(services.settings, services)))
    return Response(body, media_type=content_type)
