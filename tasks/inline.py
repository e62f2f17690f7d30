"""In-process executor: runs the same steps as the Celery canvas, in one process (bench `--executor inline`,
`sleuth ask` when no broker runs). Each step gets the same log ids, span and timing as its Celery task."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from bootstrap import Services
from investigation.tools.evidence import ENGINE_PREFIX, is_tool_engine
from observability import step_scope
from tasks import steps, tool_step


def _retrieve_slot(services: Services, inv_id: str, hop: int, slot: tuple[int, str]) -> dict[str, Any]:
    if is_tool_engine(slot[1]):
        with step_scope("sleuth.tool_call", inv_id, hop=hop):
            return tool_step.call_tool(services, inv_id, hop, slot[1].removeprefix(ENGINE_PREFIX))
    with step_scope("sleuth.retrieve", inv_id, hop=hop):
        return steps.retrieve(services, inv_id, hop, slot[0], slot[1])


def run(services: Services, inv_id: str, *, deliver: bool = True, pool: ThreadPoolExecutor | None = None) -> None:
    """Drive one investigation to its terminal state; retrievals of a hop run in parallel threads."""
    with step_scope("sleuth.start", inv_id):
        nxt = steps.start(services, inv_id)
    own_pool = pool is None
    pool = pool or ThreadPoolExecutor(max_workers=4)
    try:
        while nxt.kind == steps.NextKind.HOP:
            hop = nxt.hop
            list(pool.map(partial(_retrieve_slot, services, inv_id, hop), nxt.slots))
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
