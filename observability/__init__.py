"""Operators' view of Sleuth: Prometheus metrics, structured logs, optional OpenTelemetry spans."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from observability import logs, metrics, tracing


@contextmanager
def step_scope(task: str, inv_id: str, *, tenant_id: str | None = None, hop: int = 0) -> Iterator[None]:
    """What a Celery task gets from the signal handlers, for a step run in-process (inline executor):
    the ids on every log line, a span in the investigation's trace, the step's duration metric."""
    previous = logs.current()
    logs.bind(task=task, investigation_id=inv_id, tenant_id=tenant_id, hop=hop)
    tracing.start_task_span(task, logs.current())
    started = time.perf_counter()
    state = "SUCCESS"
    try:
        yield
    except BaseException:
        state = "FAILURE"
        raise
    finally:
        metrics.observe_step(task.removeprefix("sleuth."), time.perf_counter() - started)
        tracing.end_task_span(state)
        logs.bind(**previous)
