"""The canvas, built in one place: launch an investigation, and turn a step's `Next` into Celery work."""

from __future__ import annotations

from celery import Celery, chord, group
from celery.canvas import Signature

from investigation.tools.evidence import ENGINE_PREFIX
from observability import tracing
from tasks.next import Next, NextKind
from workers import names
from workers.publishing import published_together


def hop_canvas(app: Celery, inv_id: str, hop: int, slots: tuple[tuple[int, str], ...], *,
               priority: int = 0) -> Signature:
    """A hop = chord(every sub-query × every engine → retrieve, every planned tool → tool_call) → reduce,
    with an error callback. Tool calls run on their own queue; their arguments are not task arguments.
    Every message of the hop carries the tenant's `priority` (`app.admission.priority`)."""
    header = group(
        (
            app.signature(names.T_TOOL, args=(inv_id, hop, engine.removeprefix(ENGINE_PREFIX)))
            if engine.startswith(ENGINE_PREFIX)
            else app.signature(names.T_RETRIEVE, args=(inv_id, hop, index, engine))
        ).set(priority=priority)
        for index, engine in slots
    )
    body = app.signature(names.T_REDUCE, args=(inv_id, hop)).set(priority=priority)
    body.on_error(app.signature(names.T_HOP_FAILED, args=(inv_id, hop)).set(priority=priority))
    return chord(header, body)


def dispatch(app: Celery, inv_id: str, nxt: Next, *, priority: int = 0) -> None:
    """Enqueue what `nxt` asks for (nothing for "done"), at the tenant's queue `priority`: its messages and
    their events reach the broker together, in one round trip (`workers.publishing.published_together`)."""
    with published_together():
        if nxt.kind == NextKind.START:
            launch(app, inv_id, priority=priority)
        elif nxt.kind == NextKind.HOP:
            hop_canvas(app, inv_id, nxt.hop, nxt.slots, priority=priority).apply_async()
        elif nxt.kind == NextKind.SYNTHESIZE:
            app.send_task(names.T_SYNTHESIZE, args=(inv_id,), priority=priority)
        elif nxt.kind == NextKind.DELIVER:
            for delivery_id in nxt.deliveries:
                app.send_task(names.T_DELIVER, args=(delivery_id,), priority=priority)


def launch(app: Celery, inv_id: str, *, priority: int = 0) -> None:
    """Start an investigation that intake has persisted. Starts are few per tenant at a time (the
    in-flight cap holds the rest back), so intake sends them at the first priority."""
    # the message and its event: one round trip
    with tracing.span("sleuth.enqueue", inv_id), published_together():
        app.send_task(names.T_START, args=(inv_id,), priority=priority)


def redeliver(app: Celery, delivery_id: str) -> None:
    app.send_task(names.T_DELIVER, args=(delivery_id,))
