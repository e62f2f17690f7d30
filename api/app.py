"""`create_app`: the FastAPI application (nothing is built at import time; OpenAPI at ``/docs``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from api import body_timeout, docs_offline, errors, log_redaction
from api.finished import FinishedListener
from api.openapi_errors import document_errors
from api.routes import (
    channels,
    deliveries,
    feedback,
    health,
    hooks,
    investigations,
    metrics,
    quality,
    sources,
    tenant,
    tools,
    trace,
)
from api.schemas import InvestigationCreate
from bootstrap import Services
from config.settings import Settings, get_settings
from workers.names import T_SOURCE_SYNC


class _Queue:
    """The default enqueue hooks: a Celery app built on first use (never at import or app creation)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._app: Any = None

    def _celery(self) -> Any:
        if self._app is None:
            from workers.app import create_celery

            self._app = create_celery(self._settings)
        return self._app

    def launch(self, investigation_id: str) -> None:
        from tasks import workflow

        workflow.launch(self._celery(), investigation_id)

    def redeliver(self, delivery_id: str) -> None:
        from tasks import workflow

        workflow.redeliver(self._celery(), delivery_id)

    def sync_source(self, source_id: str, full: bool) -> None:
        self._celery().send_task(T_SOURCE_SYNC, args=[source_id, full])


def create_app(
    settings: Settings | None = None,
    *,
    services: Services | None = None,
    launcher: Callable[[str], None] | None = None,
    redeliverer: Callable[[str], None] | None = None,
) -> FastAPI:
    """The API for `settings` (or `services.settings`, or the process settings).

    `launcher(investigation_id)` enqueues a committed investigation and `redeliverer(delivery_id)` one
    delivery attempt; both default to Celery through `tasks.workflow`.
    """
    if settings is None:
        settings = services.settings if services is not None else get_settings()
    services = services or Services(settings)
    queue = _Queue(settings)
    app = FastAPI(
        title="Sleuth",
        version="0.1.0",
        summary="Asynchronous investigations: a routed, graded, budgeted retrieval loop with cited answers.",
        docs_url=None, redoc_url=None,
    )
    docs_offline.install(app)
    _static_console(app)
    _observe(services)
    app.state.services = services
    app.state.finished = FinishedListener(services)
    app.router.on_shutdown.append(app.state.finished.stop)
    app.state.launcher = launcher or queue.launch
    app.state.redeliverer = redeliverer or queue.redeliver
    app.state.source_syncer = queue.sync_source
    errors.install(app)
    body_timeout.install(app, settings.limits.request_body_timeout)
    log_redaction.install()
    for module in (
        investigations,
        deliveries,
        channels,
        hooks,
        tools,
        sources,
        tenant,
        trace,
        health,
        metrics,
        feedback,
        quality,
    ):
        app.include_router(module.router)
    _add_manual_schemas(app)
    return app


def _static_console(app: FastAPI) -> None:
    """The operator pages' stylesheet and script (no CDN, no inline code)."""
    from pathlib import Path

    from fastapi.staticfiles import StaticFiles

    from api.pages import STATIC

    app.mount(STATIC, StaticFiles(directory=Path(__file__).resolve().parent / "static"), name="console")


def _observe(services: Services) -> None:
    """Metrics and spans of this API process (the process-wide set-up happens once)."""
    from observability import events, tracing
    from observability import metrics as sleuth_metrics

    settings = services.settings
    sleuth_metrics.configure(settings, redis_client=(lambda: services.redis) if settings.redis_url else None)
    events.install()
    tracing.configure(settings)


def _add_manual_schemas(app: FastAPI) -> None:
    """Publish `InvestigationCreate` in OpenAPI: its route parses the raw body itself (after the size
    check), so FastAPI cannot infer the schema."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, summary=app.summary,
                                 routes=app.routes)
            manual = InvestigationCreate.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(manual.pop("$defs", {}))
            components["InvestigationCreate"] = manual
            app.openapi_schema = document_errors(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend the schema
