"""In-process executor: runs the same steps as the Celery canvas, in one process (bench `--executor inline`,
`sleuth ask` when no broker runs). Each step gets the same log ids, span and timing as its Celery task; a
hop's
searches, run together (`steps.retrieve_many`), get one "sleuth.retrieve" span and timing between them."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from bootstrap import Services
from investigation.ports import ReadsAhead
from investigation.state import Passage
from investigation.tools.evidence import ENGINE_PREFIX, is_tool_engine
from observability import step_scope
from tasks import steps, tool_step
from tasks.delivery_step import attempt_delivery
from tasks.next import hop_marker
from tasks.relay import Relay
from tasks.trace import write_events

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")


class _ReadingAhead:
    """A hop's searches in the pool; while any is still searching and `waiting()` says the hop still waits
    (for its query's embedding), the calling thread reads the passages the others have found
    (`ReadsAhead.read_ahead`), one at a time, first found first, each once. The reducer and synthesis then
    find those readings done. Between two passages it looks again, and stops at once: a search whose vector
    is ready must not wait for the GIL while a passage is read. A reading that fails only ends the reading
    ahead."""

    def __init__(self, pool: Executor, read: Callable[[Passage], None], waiting: Callable[[], bool]) -> None:
        self._pool, self._read, self._waiting = pool, read, waiting
        self._found: deque[Passage] = deque()  # filled by the searching threads (`found`)
        self._read_ids: set[str] = set()
        self.reads = 0  # passages read ahead (for tests and curiosity)

    def found(self, passages: Sequence[Passage]) -> None:
        self._found.extend(passages)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        runs = [self._pool.submit(fn, item) for item in items]
        pending = [run for run in runs if not run.done()]
        reading = True
        while pending:
            if reading and self._found and self._waiting():
                reading = self._read_next()
            else:
                wait(pending, return_when=FIRST_COMPLETED)
            pending = [run for run in pending if not run.done()]
        return [run.result() for run in runs]

    def _read_next(self) -> bool:
        passage = self._found.popleft()
        if passage.chunk_id in self._read_ids:
            return True
        self._read_ids.add(passage.chunk_id)
        try:
            self._read(passage)
        except Exception:  # only a warm-up: the steps read the passage themselves
            log.warning("reading ahead stopped at %s", passage.chunk_id, exc_info=True)
            return False
        self.reads += 1
        return True


def _call_tool(services: Services, inv_id: str, hop: int, slot: tuple[int, str]) -> dict[str, Any]:
    with step_scope("sleuth.tool_call", inv_id, hop=hop):
        return tool_step.call_tool(services, inv_id, hop, slot[1].removeprefix(ENGINE_PREFIX))


def _retrieve_hop(services: Services, inv_id: str, hop: int, slots: tuple[tuple[int, str], ...],
                  pool: ThreadPoolExecutor, relay: Relay | None = None) -> Relay:
    """A hop's slots: its tool calls each in a pool thread, as the canvas's tool tasks; its searches as one
    `steps.retrieve_many` (one Redis round trip before them and one after: what a retrieval task does once
    per slot), the searches themselves in the pool's threads. The `relay` (a new one when none is given,
    returned) gets what the hop's reducer is handed (`steps.reduce(relay=...)`): the searches' trace events,
    for its transaction (one transaction fewer a hop), and, in a hop without tools, the results, usage and
    first-seen passages that the round trip after the searches read for it (two round trips fewer a hop).
    The hop's charge (`hop_marker`: once, whoever makes it; the steps given a relay leave it here) rides on
    the searches' first round trip (one round trip fewer a hop), or is made on its own in a hop of tools only.

    A hop of one query has one model run to wait for (its vector search's query embedding) on one core:
    while it runs, this thread reads the lexical search's passages ahead for a reasoner that `ReadsAhead`.
    With two queries or more, both cores embed and reading only delays the hop, so the searches are just
    waited for."""
    relay = relay if relay is not None else Relay()
    tools = [
        pool.submit(_call_tool, services, inv_id, hop, slot) for slot in slots if is_tool_engine(slot[1])
    ]
    searches = [slot for slot in slots if not is_tool_engine(slot[1])]
    reasoner = services.reasoner
    relay.start_hop(whole=not tools)  # a tool's result is parked by its own call
    try:
        if not searches:
            services.state.charge_once(inv_id, hop_marker(inv_id, hop), "hops")
        if searches:
            with step_scope("sleuth.retrieve", inv_id, hop=hop):
                if isinstance(reasoner, ReadsAhead) and len({index for index, _engine in searches}) == 1:
                    ahead = _ReadingAhead(pool, reasoner.read_ahead, services.preparing_queries)
                    steps.retrieve_many(services, inv_id, hop, searches, run=ahead.map, found=ahead.found,
                                        relay=relay)
                else:
                    steps.retrieve_many(services, inv_id, hop, searches, run=pool.map, relay=relay)
    finally:
        wait(tools)  # none left running behind a failed search step
    try:
        for call in tools:
            call.result()
    except BaseException:
        write_events(services, relay.events, quietly=True)  # the searches happened: traced all the same
        raise
    return relay


def run(
    services: Services, inv_id: str, *, deliver: bool = True, pool: ThreadPoolExecutor | None = None
) -> None:
    """Drive one investigation to its terminal state; retrievals of a hop run in parallel threads. Each step
    is handed what the one before wrote and read (`Relay`): it reads only the status and the hop's state."""
    relay = Relay()
    with step_scope("sleuth.start", inv_id):
        nxt = steps.start(services, inv_id, relay=relay)
    own_pool = pool is None
    pool = pool or ThreadPoolExecutor(max_workers=4)
    try:
        while nxt.kind == steps.NextKind.HOP:
            hop = nxt.hop
            _retrieve_hop(services, inv_id, hop, nxt.slots, pool, relay)
            with step_scope("sleuth.reduce", inv_id, hop=hop):
                nxt = steps.reduce(services, inv_id, hop, relay=relay)
        if nxt.kind == steps.NextKind.SYNTHESIZE:
            with step_scope("sleuth.synthesize", inv_id, hop=nxt.hop):
                nxt = steps.synthesize(services, inv_id, relay=relay)
        if deliver and nxt.kind == steps.NextKind.DELIVER:
            for delivery_id in nxt.deliveries:
                with step_scope("sleuth.deliver", inv_id):
                    attempt_delivery(services, delivery_id)
    finally:
        if own_pool:
            pool.shutdown(wait=True)
