"""Scrape-time gauges of knowledge sources, from the database: items each source has in the engines, seconds
since its last successful sync, and its failed syncs (docs/sources.md, "Operating")."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from storage import _sources as sources_repo
from storage.source_models import utcnow

if TYPE_CHECKING:
    from bootstrap import Services

log = logging.getLogger(__name__)
LABELS = ["tenant", "source", "type"]


class SourceCollector:
    """`sleuth_source_items`, `sleuth_source_seconds_since_success` (absent before a first success) and
    `sleuth_source_sync_failures` per source."""

    def __init__(self, services: Services, *, now: Callable[[], datetime] = utcnow) -> None:
        self._services = services
        self._now = now

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        items = GaugeMetricFamily(
            "sleuth_source_items", "Items a knowledge source has in the engines.", labels=LABELS
        )
        age = GaugeMetricFamily("sleuth_source_seconds_since_success",
                                "Seconds since the source's last successful sync.", labels=LABELS)
        failures = GaugeMetricFamily(
            "sleuth_source_sync_failures", "Syncs of the source that ended with an error.", labels=LABELS
        )
        try:
            with self._services.session() as session:
                sources = sources_repo.list_sources(session)
            now = self._now()
            for source in sources:
                labels = [source.tenant_id, source.name, source.type]
                items.add_metric(labels, float(source.items))
                failures.add_metric(labels, float(source.failures))
                if source.last_success_at is not None:
                    age.add_metric(labels, max(0.0, (now - source.last_success_at).total_seconds()))
        except Exception:
            log.warning("metrics: source gauges unavailable", exc_info=True)
        yield items
        yield age
        yield failures
