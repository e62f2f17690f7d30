"""Prometheus metrics of every Sleuth process, gathered across processes with prometheus-client's
multiprocess mode (one directory per host or pod; see docs/observability.md for why).

Nothing is created at import time: `configure(settings)` points prometheus-client at the directory and
builds the metric objects; until then every `record_*` call is a no-op, so tests and tools that never
configure metrics pay nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.settings import Settings

log = logging.getLogger(__name__)

# Seconds. Steps are fast (ms); investigations take seconds; deliveries may wait on slow receivers.
STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
E2E_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
CALL_BUCKETS = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64)
TOKEN_BUCKETS = (0, 100, 250, 500, 1000, 1500, 2000, 4000, 8000, 16000)
OTHER_TENANT = "other"


@dataclass
class Metrics:
    """The metric objects (all names start with `sleuth_`)."""

    investigations: Any
    investigation_seconds: Any
    intake_to_start: Any
    hop_seconds: Any
    step_seconds: Any
    task_queue_wait: Any
    retrieval_seconds: Any
    retrieval_calls: Any
    investigation_retrieval_calls: Any
    investigation_evidence_tokens: Any
    llm_tokens: Any
    llm_cost: Any
    llm_fallbacks: Any
    budget_stops: Any
    delivery_attempts: Any
    delivery_seconds: Any
    deliveries_dead: Any


_metrics: Metrics | None = None
_lock = threading.Lock()
_tenants: TenantLabels | None = None


class TenantLabels:
    """Bounded tenant label values: the first `limit` tenants seen keep their id, every later one is
    `other`. With Redis the set is shared by every process (a Lua check-and-add), so the cap holds for
    the whole deployment; without it, per process."""

    _SCRIPT = """
    if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
    if redis.call('SCARD', KEYS[1]) < tonumber(ARGV[2]) then redis.call('SADD', KEYS[1], ARGV[1]) return 1 end
    return 0
    """

    def __init__(self, limit: int, redis_client: Callable[[], Any] | None = None, key: str = "") -> None:
        self.limit = limit
        self._redis = redis_client
        self._key = key
        self._known: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, tenant_id: str | None) -> str:
        if not tenant_id:
            return "none"
        found = self._known.get(tenant_id)
        if found is not None:
            return found
        label = tenant_id if self._admit(tenant_id) else OTHER_TENANT
        with self._lock:
            self._known[tenant_id] = label
        return label

    def _admit(self, tenant_id: str) -> bool:
        if self.limit <= 0:
            return False
        if self._redis is not None:
            try:
                return bool(self._redis().eval(self._SCRIPT, 1, self._key, tenant_id, self.limit))
            except Exception:
                log.debug("tenant label registry unavailable", exc_info=True)
        with self._lock:
            admitted = sum(1 for v in self._known.values() if v != OTHER_TENANT)
        return admitted < self.limit


def metrics_dir(settings: Settings) -> Path:
    return settings.effective_metrics_dir.resolve()


def reset_dir(settings: Settings) -> Path:
    """Empty the multiprocess directory: call once when a whole stack starts (`sleuth up`), never while
    processes still write to it."""
    path = metrics_dir(settings)
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink(missing_ok=True)
    return path


def configure(settings: Settings, *, redis_client: Callable[[], Any] | None = None) -> Metrics:
    """Point prometheus-client at the multiprocess directory and build the metrics (once per process)."""
    global _metrics, _tenants
    with _lock:
        if _metrics is not None:
            return _metrics
        path = metrics_dir(settings)
        path.mkdir(parents=True, exist_ok=True)
        # prometheus-client reads the directory from the environment when a metric value is created.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
        from prometheus_client import values

        # The host name is part of each process's file name: containers sharing the directory (compose
        # mounts one volume into every Sleuth container) all have small pids that would collide.
        host = socket.gethostname().replace("_", "-")
        values.ValueClass = values.MultiProcessValue(  # type: ignore[no-untyped-call]  # prometheus_client multiprocess: untyped
            process_identifier=lambda: f"{host}-{os.getpid()}")
        _tenants = TenantLabels(settings.observability.metrics_max_tenants, redis_client,
                                f"{settings.redis_prefix}:metrics:tenants")
        _metrics = _build()
        return _metrics


def _build() -> Metrics:
    from prometheus_client import Counter, Histogram

    return Metrics(
        investigations=Counter(
            "sleuth_investigations_total",
            "Investigations that reached a terminal state.",
            ["status", "route", "stop_reason", "tenant"],
        ),
        investigation_seconds=Histogram(
            "sleuth_investigation_duration_seconds",
            "Intake to terminal state, end to end.",
            ["route", "status"],
            buckets=E2E_BUCKETS,
        ),
        intake_to_start=Histogram(
            "sleuth_intake_to_start_seconds",
            "Intake (enqueue) to the start step running.",
            buckets=STEP_BUCKETS,
        ),
        hop_seconds=Histogram(
            "sleuth_hop_duration_seconds", "A hop: planned to its loop decision.", buckets=STEP_BUCKETS
        ),
        step_seconds=Histogram(
            "sleuth_step_duration_seconds",
            "One step function (start, retrieve, reduce, synthesize, deliver).",
            ["step"],
            buckets=STEP_BUCKETS,
        ),
        task_queue_wait=Histogram(
            "sleuth_task_queue_wait_seconds",
            "Message published to task started.",
            ["task"],
            buckets=STEP_BUCKETS,
        ),
        retrieval_seconds=Histogram(
            "sleuth_retrieval_duration_seconds",
            "One sub-query on one engine.",
            ["engine"],
            buckets=STEP_BUCKETS,
        ),
        retrieval_calls=Counter(
            "sleuth_retrieval_calls_total", "Engine calls by outcome.", ["engine", "outcome"]
        ),
        investigation_retrieval_calls=Histogram(
            "sleuth_investigation_retrieval_calls",
            "Retrieval calls per finished investigation.",
            buckets=CALL_BUCKETS,
        ),
        investigation_evidence_tokens=Histogram(
            "sleuth_investigation_evidence_tokens",
            "Evidence tokens handed to synthesis per investigation.",
            buckets=TOKEN_BUCKETS,
        ),
        llm_tokens=Counter(
            "sleuth_llm_tokens_total", "LLM tokens by model, tenant and kind.", ["model", "tenant", "kind"]
        ),
        llm_cost=Counter(
            "sleuth_llm_cost_usd_total",
            "Estimated LLM cost at list price (not billing).",
            ["model", "tenant"],
        ),
        llm_fallbacks=Counter("sleuth_llm_fallbacks_total", "Heuristic fallbacks by reason.", ["reason"]),
        budget_stops=Counter(
            "sleuth_budget_stops_total", "Investigations stopped by a budget, by kind.", ["kind"]
        ),
        delivery_attempts=Counter(
            "sleuth_delivery_attempts_total",
            "Delivery attempts by channel and outcome.",
            ["channel", "outcome"],
        ),
        delivery_seconds=Histogram(
            "sleuth_delivery_duration_seconds", "One delivery attempt.", ["channel"], buckets=STEP_BUCKETS
        ),
        deliveries_dead=Counter("sleuth_deliveries_dead_total", "Deliveries that went dead.", ["channel"]),
    )


def get() -> Metrics | None:
    """The metrics of this process, or None when `configure` was never called."""
    return _metrics


def tenant_label(tenant_id: str | None) -> str:
    return _tenants(tenant_id) if _tenants is not None else OTHER_TENANT


def observe_step(step: str, seconds: float) -> None:
    if _metrics is not None:
        _metrics.step_seconds.labels(step).observe(seconds)


def observe_queue_wait(task: str, seconds: float) -> None:
    if _metrics is not None and seconds >= 0:
        _metrics.task_queue_wait.labels(task).observe(seconds)
        if task == "sleuth.start":
            _metrics.intake_to_start.observe(seconds)


def _reset_for_tests() -> None:
    """Forget this process's metric objects (tests configure a fresh directory each)."""
    global _metrics, _tenants
    from prometheus_client import REGISTRY

    with _lock:
        if _metrics is not None:
            for metric in vars(_metrics).values():
                try:
                    REGISTRY.unregister(metric)
                except KeyError:
                    pass
        _metrics = None
        _tenants = None
