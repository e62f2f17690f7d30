"""In-process executor: runs the same steps as the Celery canvas, in one process (bench `--executor inline`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from bootstrap import Services
from tasks import steps


def _retrieve_slot(services: Services, inv_id: str, hop: int, slot: tuple[int, str]) -> dict[str, Any]:
    return steps.retrieve(services, inv_id, hop, slot[0], slot[1])


def run(services: Services, inv_id: str, *, deliver: bool = True, pool: ThreadPoolExecutor | None = None) -> None:
    """Drive one investigation to its terminal state; retrievals of a hop run in parallel threads."""
    nxt = steps.start(services, inv_id)
    own_pool = pool is None
    pool = pool or ThreadPoolExecutor(max_workers=4)
    try:
        while nxt.kind == "hop":
            hop = nxt.hop
            list(pool.map(partial(_retrieve_slot, services, inv_id, hop), nxt.slots))
            nxt = steps.reduce(services, inv_id, hop)
        if nxt.kind == "synthesize":
            nxt = steps.synthesize(services, inv_id)
        if deliver and nxt.kind == "deliver":
            from tasks.delivery_step import attempt_delivery

            for delivery_id in nxt.deliveries:
                attempt_delivery(services, delivery_id)
    finally:
        if own_pool:
            pool.shutdown(wait=True)
