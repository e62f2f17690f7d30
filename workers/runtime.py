"""Per-process runtime of a worker: the settings it was started with and its `Services`, rebuilt after
fork."""

from __future__ import annotations

import gc
import logging
import threading

from celery.signals import worker_process_init

from adapters.search.embedder import embed_matrix
from bootstrap import Services
from config.settings import Settings, get_settings

log = logging.getLogger(__name__)

_settings: Settings | None = None
_services: Services | None = None


def configure(settings: Settings) -> None:
    global _settings, _services
    _settings = settings
    _services = None


def settings() -> Settings:
    """The settings this process's Celery app was built with."""
    return _settings or get_settings()


def services() -> Services:
    """This process's services (clients are created lazily, so a forked child builds its own)."""
    global _services
    if _services is None:
        _services = Services(_settings or get_settings())
    return _services


@worker_process_init.connect
def _reset_after_fork(**_: object) -> None:
    # Connections inherited from the parent process must never be shared with a child.
    global _services
    _services = None
    # Off the signal handler: Celery kills a child whose init takes longer than its start timeout (4 s).
    if settings().workers.worker_warm_up:
        threading.Thread(
            target=prepare_process, args=(services(),), name="sleuth-warm-up", daemon=True
        ).start()


def prepare_process(services: Services) -> None:
    """A process's start-up, once it will only answer questions: `warm_up`, then `freeze_heap`."""
    warm_up(services)
    freeze_heap()


# The cyclic collector's thresholds once start-up is over: a young collection every 20,000 new container
# objects instead of CPython's 700 (older generations as CPython's). An investigation allocates tens of
# thousands; most die by reference counting, but every young collection walks the survivors of the moment and
# promotes them, which filled the older generations and brought a full collection into the loop; fewer
# young collections keep full ones out of it.
GC_THRESHOLDS = (20_000, 10, 10)


def freeze_heap() -> None:
    """Take what the process has built so far out of the cyclic collector's sight (`gc.freeze`, after one
    collection): modules, the engine, the loaded indexes and the model live as long as the process, yet
    every full collection walked them all again. For a process whose start-up is over (a pool process
    after `warm_up`, the inline bench), so a full collection inside the loop no longer stalls an
    investigation for the whole start-up heap. What is allocated later (the text
    caches, the investigations' objects) is collected as before, with `GC_THRESHOLDS`."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def warm_up(services: Services) -> None:
    """Build what a pool process's first task would otherwise build while an investigation waits: the
    database engine, the Redis client, the search backends, the reasoner and the embedder's query session
    (tokenizer and model loaded by embedding one short text), and what the reasoner's routing embeds for every
    process (`warm_up`, when it has one: the heuristic router's prototypes). The first task that needs one of
    them meanwhile waits for it (cached properties and the embedder are locked), never builds it twice.
    Best effort: whatever fails here is built, and reported, by the step that needs it."""
    try:
        _ = services.engine, services.state, services.backends, services.reasoner
        embed_matrix(services.embedder, ["warm up"], persist=False)
        reasoner_warm_up = getattr(services.reasoner, "warm_up", None)  # e.g. the router's prototypes
        if reasoner_warm_up is not None:
            reasoner_warm_up()
    except Exception:
        log.debug("worker warm-up failed", exc_info=True)
