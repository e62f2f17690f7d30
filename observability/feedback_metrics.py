"""`sleuth_feedback_total{rating, route, tenant, source}`: ratings as they are recorded, in the process's
metrics (a no-op until `observability.metrics.configure` ran, like every other metric)."""

from __future__ import annotations

import threading
from typing import Any

from observability import metrics

_counter: Any = None
_lock = threading.Lock()


def _ratings() -> Any:
    global _counter
    with _lock:
        if _counter is None:
            from prometheus_client import Counter

            _counter = Counter(
                "sleuth_feedback_total",
                "Ratings of answers by rating, route, tenant and source.",
                ["rating", "route", "tenant", "source"],
            )
    return _counter


def record_rating(rating: str, route: str | None, tenant_id: str, source: str) -> None:
    if metrics.get() is None:
        return
    _ratings().labels(rating, route or "none", metrics.tenant_label(tenant_id), source).inc()
