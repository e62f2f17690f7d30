"""In-process executor: runs the same steps as the Celery canvas, in one process (bench `--executor inline`,
`sleuth ask` when no broker runs). Each step gets the same log ids, span and timing as its Celery task; a hop's
searches, run together (`steps.retrieve_many`), get one "sleuth.retrieve" span and timing between them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from bootstrap import Services
from investigation.tools.evidence import ENGINE_PREFIX, is_tool_engine
from observability import step_scope
from tasks import steps, tool_step


def _call_tool(services: Services, inv_id: str, hop: int, slot: tuple[int, str]) -> dict[str, Any]:
    with step_scope("sleuth.tool_call", inv_id, hop=hop):
        return tool_step.call_tool(services, inv_id, hop, slot[1].removeprefix(ENGINE_PREFIX))


def _retrieve_hop(services: Services, inv_id: str, hop: int, slots: tuple[tuple[int, str], ...],
                  pool: ThreadPoolExecutor) -> None:
    """A hop's slots: its tool calls each in a pool thread, as the canvas's tool tasks; its searches as one
    `steps.retrieve_many` (one Redis round trip before them and one after, one transaction for their
    events: what a retrieval task does once per slot), the searches themselves in the pool's threads."""
    tools = [pool.submit(_call_tool, services, inv_id, hop, slot) for slot in slots if is_tool_engine(slot[1])]
    searches = [slot for slot in slots if not is_tool_engine(slot[1])]
    try:
        if searches:
            with step_scope("sleuth.retrieve", inv_id, hop=hop):
                steps.retrieve_many(services, inv_id, hop, searches, run=pool.map)
    finally:
        wait(tools)  # none left running behind a failed search step
    for call in tools:
        call.result()


def run(services: Services, inv_id: str, *, deliver: bool = True, pool: ThreadPoolExecutor | None = None) -> None:
    """Drive one investigation to its terminal state; retrievals of a hop run in parallel threads."""
    with step_scope("sleuth.start", inv_id):
        nxt = steps.start(services, inv_id)
    own_pool = pool is None
    pool = pool or ThreadPoolExecutor(max_workers=4)
    try:
        while nxt.kind == steps.NextKind.HOP:
            hop = nxt.hop
            _retrieve_hop(services, inv_id, hop, nxt.slots, pool)
            with step_scope("sleuth.reduce", inv_id, hop=hop):
                nxt = steps.reduce(services, inv_id, hop)
        if nxt.kind == steps.NextKind.SYNTHESIZE:
            with step_scope("sleuth.synthesize", inv_id, hop=nxt.hop):
                nxt = steps.synthesize(services, inv_id)
        if deliver and nxt.kind == steps.NextKind.DELIVER:
            from tasks.delivery_step import attempt_delivery

            for delivery_id in nxt.deliveries:
                with step_scope("sleuth.deliver", inv_id):
                    attempt_delivery(services, delivery_id)
    finally:
        if own_pool:
            pool.shutdown(wait=True)
