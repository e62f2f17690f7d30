"""Serving the metrics: the multiprocess registry plus scrape-time gauges (queue depth, dead deliveries,
investigations in flight), for the API's ``/metrics`` and for a worker's exporter port."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from config.settings import Settings
from observability import metrics
from observability.source_metrics import SourceCollector
from workers.broker import queue_depths

if TYPE_CHECKING:
    from bootstrap import Services

log = logging.getLogger(__name__)


class StateCollector:
    """Gauges read at scrape time from the broker (queue lengths) and the database (dead deliveries, work in
    flight): a value that is the same whoever asks, so it needs no multiprocess bookkeeping."""

    def __init__(self, services: Services) -> None:
        self._services = services

    def describe(self) -> list[Any]:
        return []  # collected at scrape time only; nothing to check at registration

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        depth = GaugeMetricFamily("sleuth_queue_depth", "Messages waiting in each Celery queue.",
                                  labels=["queue"])
        try:
            if self._services.settings.redis_url:  # Redis lists or RabbitMQ queues: the broker's own count
                settings = self._services.settings
                for queue, count in queue_depths(settings, self._services.redis).items():
                    depth.add_metric([queue], float(count))
        except Exception:
            log.warning("metrics: queue depth unavailable", exc_info=True)
        yield depth
        dead = GaugeMetricFamily("sleuth_deliveries_dead", "Deliveries now dead (waiting for a redeliver).",
                                 labels=["channel"])
        flight = GaugeMetricFamily("sleuth_investigations_in_flight", "Investigations not yet terminal.",
                                   labels=["status"])
        try:
            from sqlalchemy import func
            from sqlmodel import col, select

            from storage.models import Delivery, Investigation

            with self._services.session() as session:
                for channel, count in session.exec(
                        select(Delivery.channel, func.count()).where(Delivery.status == "dead")
                        .group_by(Delivery.channel)).all():
                    dead.add_metric([channel], float(count))
                for status, count in session.exec(
                        select(Investigation.status, func.count())
                        .where(col(Investigation.status).in_(("queued", "running")))
                        .group_by(Investigation.status)).all():
                    flight.add_metric([status], float(count))
        except Exception:
            log.warning("metrics: database gauges unavailable", exc_info=True)
        yield dead
        yield flight


def registry(settings: Settings, services: Services | None = None) -> Any:
    """Every process's counters and histograms (from the multiprocess directory), plus `StateCollector`."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    reg = CollectorRegistry(auto_describe=False)
    path = metrics.metrics_dir(settings)
    path.mkdir(parents=True, exist_ok=True)
    MultiProcessCollector(reg, path=str(path))  # type: ignore[no-untyped-call]  # prometheus_client multiprocess: untyped
    if services is not None:
        reg.register(StateCollector(services))
        reg.register(SourceCollector(services))
    return reg


def render(reg: Any) -> tuple[bytes, str]:
    """The registry in the Prometheus text format, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(reg), CONTENT_TYPE_LATEST


def is_loopback(host: str) -> bool:
    """Whether a bind address reaches this machine only ("" and 0.0.0.0 reach every interface)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def scrape_allowed(settings: Settings, authorization: str, *, bound_to: str) -> bool:
    """Whether a scrape may read the metrics (per-tenant ids and volumes): with SLEUTH_METRICS_TOKEN set,
    only with ``Authorization: Bearer <token>``; without it, only when the server listens on loopback."""
    token = settings.security.metrics_token
    if token is None:
        return is_loopback(bound_to)
    scheme, _, given = authorization.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(),
                                                              token.get_secret_value().encode())


def start_worker_exporter(settings: Settings, *, host: str = "0.0.0.0") -> int | None:
    """Serve this host's/pod's multiprocess metrics on ``settings.observability.metrics_port`` (a worker pod
    in k8s, where the API cannot read the workers' directory), behind the same token as the API's /metrics.
    Returns the port, or None when off."""
    if not settings.observability.metrics_port:
        return None
    from wsgiref.simple_server import make_server

    from prometheus_client import make_wsgi_app
    from prometheus_client.exposition import ThreadingWSGIServer, _SilentHandler

    metrics_app = make_wsgi_app(registry(settings))

    def guarded(environ: dict[str, Any], start_response: Any) -> Any:
        if not scrape_allowed(settings, environ.get("HTTP_AUTHORIZATION", ""), bound_to=host):
            start_response("401 Unauthorized", [("Content-Type", "text/plain"),
                                                ("WWW-Authenticate", "Bearer")])
            return [b"metrics token required (SLEUTH_METRICS_TOKEN)\n"]
        return metrics_app(environ, start_response)

    server = make_server(host, settings.observability.metrics_port, guarded, ThreadingWSGIServer,
                         handler_class=_SilentHandler)
    threading.Thread(target=server.serve_forever, name="metrics-exporter", daemon=True).start()
    log.info("metrics exporter listening", extra={"port": settings.observability.metrics_port})
    return settings.observability.metrics_port
