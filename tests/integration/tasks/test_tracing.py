"""OpenTelemetry (off by default): one trace per investigation across its steps, checked with the SDK's
in-memory exporter on the in-process executor (the same step scopes the Celery signals open)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support.stack import Stack

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

otel = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")


@pytest.fixture()
def exporter() -> Iterator[InMemorySpanExporter]:
    from observability import tracing

    tracing.shutdown()
    memory: InMemorySpanExporter = otel.InMemorySpanExporter()
    yield memory
    tracing.shutdown()


def test_tracing_is_off_by_default(stack: Stack) -> None:
    from observability import tracing

    tracing.shutdown()
    assert tracing.configure(stack.settings) is None and not tracing.enabled()


def test_one_trace_per_investigation_across_every_step(stack: Stack, exporter: InMemorySpanExporter) -> None:
    from cli.commands import create_and_launch
    from observability import events, tracing
    from tasks import inline

    tracing.configure(stack.settings, exporter=exporter)
    events.install()
    services = stack.services
    first = create_and_launch(
        services,
        stack.tenant_name,
        "Which plan includes SCIM provisioning?",
        "agentic",
        launch=lambda i: inline.run(services, i),
    )
    second = create_and_launch(services, stack.tenant_name, "Good morning!", "agentic",
                               launch=lambda i: inline.run(services, i))
    spans = exporter.get_finished_spans()
    by_trace: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        by_trace.setdefault(span.context.trace_id, []).append(span)
    assert set(by_trace) == {tracing.trace_id_of(first), tracing.trace_id_of(second)}
    names = {s.name for s in by_trace[tracing.trace_id_of(first)]}
    assert {"sleuth.investigation", "sleuth.start", "sleuth.retrieve", "sleuth.reduce",
            "sleuth.synthesize"} <= names, names
    (root,) = [s for s in by_trace[tracing.trace_id_of(first)] if s.name == "sleuth.investigation"]
    assert root.parent is None and (root.attributes or {}).get("sleuth.status") == "answered"
    for span in by_trace[tracing.trace_id_of(first)]:
        if span is not root:
            assert span.parent is not None and span.parent.span_id == root.context.span_id, span.name
    retrieves = [s for s in by_trace[tracing.trace_id_of(first)] if s.name == "sleuth.retrieve"]
    hops = [(s.attributes or {}).get("sleuth.hop") for s in retrieves]
    assert hops and all(isinstance(hop, int) and hop >= 1 for hop in hops), hops


def test_a_step_run_inside_a_task_has_its_own_span_and_the_task_keeps_its_own(
        stack: Stack, exporter: InMemorySpanExporter) -> None:
    """Synthesis run by the reducer that stops the loop (`tasks.celery_tasks.synthesis_in_place`): its
    `step_scope` opens inside the reducer's task span, and closing it gives the reducer's span back."""
    from observability import logs, step_scope, tracing

    tracing.configure(stack.settings, exporter=exporter)
    inv_id = "inv-nested-spans"
    tracing.start_task_span("sleuth.reduce", {"investigation_id": inv_id, "hop": 1})  # what task_prerun opens
    with step_scope("sleuth.synthesize", inv_id, tenant_id="tenant-1", hop=1):
        assert logs.current()["task"] == "sleuth.synthesize"
    tracing.end_task_span("SUCCESS")  # what task_postrun closes
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"sleuth.reduce", "sleuth.synthesize"}
    assert (spans["sleuth.reduce"].attributes or {}).get("sleuth.state") == "SUCCESS"
    assert (spans["sleuth.synthesize"].attributes or {}).get("sleuth.state") == "SUCCESS"
    for span in spans.values():
        assert span.parent is not None and span.parent.span_id == tracing.root_span_id_of(inv_id)
    tracing.end_task_span("SUCCESS")  # nothing left open: a no-op
    assert len(exporter.get_finished_spans()) == 2
