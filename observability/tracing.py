"""Optional OpenTelemetry spans (``SLEUTH_OTEL_ENABLED=true``; needs the `otel` extra).

One trace per investigation without passing context through the canvas: the trace id IS the
investigation id (a uuid4 hex is 128 bits, like a trace id) and the root span id is derived from it, so
every task of every hop, in any process, parents its span on the same (trace, root) pair. The root span
`sleuth.investigation` itself is emitted when the investigation ends, from intake time to the end.
Spans go over OTLP/HTTP to ``SLEUTH_OTEL_ENDPOINT`` (or to an exporter handed to `configure`, in tests).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from config.settings import Settings

log = logging.getLogger(__name__)

_tracer: Any = None
_provider: Any = None
_forced: ContextVar[tuple[int, int] | None] = ContextVar("sleuth_forced_ids", default=None)
# span, token, enclosing
_open: ContextVar[tuple[Any, Any, Any] | None] = ContextVar("sleuth_task_span", default=None)


def enabled() -> bool:
    return _tracer is not None


def trace_id_of(inv_id: str) -> int:
    try:
        value = int(inv_id[:32], 16)
    except ValueError:
        value = 0
    return value or int(hashlib.sha256(inv_id.encode()).hexdigest()[:32], 16)


def root_span_id_of(inv_id: str) -> int:
    return int(hashlib.sha256(inv_id.encode()).hexdigest()[:16], 16) or 1


def configure(settings: Settings, *, exporter: Any = None) -> Any:
    """Set up this process's tracer (once); None when tracing is off or the SDK is not installed."""
    global _tracer, _provider
    if _tracer is not None:
        return _provider
    if not settings.observability.otel_enabled and exporter is None:
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
    except ImportError:
        log.warning(
            "SLEUTH_OTEL_ENABLED is set but opentelemetry-sdk is not installed (pip install sleuth[otel])"
        )
        return None

    class _Ids(RandomIdGenerator):
        """Random ids, except for the root span of an investigation (forced by `finish_investigation`)."""

        def generate_trace_id(self) -> int:
            forced = _forced.get()
            return forced[0] if forced else super().generate_trace_id()

        def generate_span_id(self) -> int:
            forced = _forced.get()
            return forced[1] if forced else super().generate_span_id()

    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.observability.otel_service_name}),
        id_generator=_Ids(),
    )
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    elif settings.observability.otel_endpoint:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            log.warning("SLEUTH_OTEL_ENDPOINT is set but opentelemetry-exporter-otlp-proto-http is missing")
        else:
            provider.add_span_processor(
                BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.observability.otel_endpoint))
            )
    _provider, _tracer = provider, provider.get_tracer("sleuth")
    return provider


def shutdown() -> None:
    """Flush and forget the tracer (tests, process exit)."""
    global _tracer, _provider
    if _provider is not None:
        _provider.shutdown()
    _tracer = _provider = None


def _parent(inv_id: str) -> Any:
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    ctx = SpanContext(trace_id=trace_id_of(inv_id), span_id=root_span_id_of(inv_id), is_remote=True,
                      trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(ctx))


def _attrs(fields: dict[str, Any]) -> dict[str, Any]:
    return {f"sleuth.{k}": v for k, v in fields.items() if isinstance(v, str | int | float | bool)}


@contextmanager
def span(name: str, inv_id: str, **attributes: Any) -> Iterator[Any]:
    """A span in the investigation's trace (a no-op when tracing is off)."""
    if _tracer is None:
        yield None
        return
    with _tracer.start_as_current_span(name, context=_parent(inv_id),
                                       attributes=_attrs({"investigation_id": inv_id, **attributes})) as s:
        yield s


def start_task_span(name: str, fields: dict[str, Any]) -> None:
    """Open the span of one task (closed by `end_task_span`); skipped for tasks of no investigation."""
    inv_id = fields.get("investigation_id")
    if _tracer is None or not inv_id:
        return
    from opentelemetry import context as otel_context
    from opentelemetry import trace

    task_span = _tracer.start_span(name, context=_parent(str(inv_id)), attributes=_attrs(fields))
    token = otel_context.attach(trace.set_span_in_context(task_span))
    _open.set((task_span, token, _open.get()))  # a step run inside a task's (synthesis in the reducer) nests


def end_task_span(state: str | None) -> None:
    opened = _open.get()
    if opened is None:
        return
    from opentelemetry import context as otel_context

    task_span, token, enclosing = opened
    _open.set(enclosing)
    if state:
        task_span.set_attribute("sleuth.state", state)
    task_span.end()
    try:
        otel_context.detach(token)
    except Exception:
        log.debug("span context detach skipped", exc_info=True)


def _ns(moment: datetime) -> int:
    return int(moment.replace(tzinfo=moment.tzinfo or UTC).timestamp() * 1e9)


def finish_investigation(inv_id: str, started: datetime, ended: datetime, **attributes: Any) -> None:
    """Emit the root span of the investigation's trace, from intake to its terminal state."""
    if _tracer is None:
        return
    from opentelemetry.context import Context

    token = _forced.set((trace_id_of(inv_id), root_span_id_of(inv_id)))
    try:
        root = _tracer.start_span("sleuth.investigation", context=Context(), start_time=_ns(started),
                                  attributes=_attrs({"investigation_id": inv_id, **attributes}))
    finally:
        _forced.reset(token)
    root.end(end_time=max(_ns(ended), _ns(started)))


def record_call(name: str, inv_id: str, ended: datetime, seconds: float, **attributes: Any) -> None:
    """A span for a call known only after the fact (an LLM call read from its trace event)."""
    if _tracer is None:
        return
    end = _ns(ended)
    s = _tracer.start_span(name, context=_parent(inv_id), start_time=end - int(seconds * 1e9),
                           attributes=_attrs({"investigation_id": inv_id, **attributes}))
    s.end(end_time=end)
