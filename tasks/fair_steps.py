"""The step gate around Celery tasks (`tasks.fairness`: the running-step cap of `app.admission_steps`): a
step of a tenant over its cap is parked instead of run, and every step that ends sends parked ones again
while there is room."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from celery import Celery, Task
from celery.exceptions import Ignore
from celery.signals import worker_process_init, worker_process_shutdown
from redis.exceptions import RedisError

from tasks.facts import tenant_of
from tasks.fairness import fairness
from workers import runtime

log = logging.getLogger(__name__)


def sender(app: Celery) -> Callable[[str], None]:
    """Send a parked step's message again (its signature as parked: same id, chord, callbacks, priority)."""
    return lambda message: app.signature(json.loads(message)).apply_async()


def release(app: Celery, *, prune: bool = False) -> int:
    """Send parked steps whose tenant has room; `prune` first forgets this host's dead processes (the
    watchdog's run: a dead process must not count as a slot)."""
    return fairness().release_parked(runtime.services(), sender(app), prune=prune)


def fair_step(inv_arg: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Gate a step task whose investigation id is positional argument `inv_arg`."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(self: Task, *args: Any, **kwargs: Any) -> Any:
            services = runtime.services()
            if not services.settings.redis_url:
                return fn(self, *args, **kwargs)
            gate = fairness()
            tenant_id = tenant_of(services, args[inv_arg])
            if not gate.enter(services, tenant_id):
                message = json.dumps(dict(self.signature_from_request(self.request, args, kwargs)))
                gate.park(services, tenant_id, message)
                log.info("%s of %s parked: tenant %s is at its running-step cap", self.name, args[inv_arg],
                         tenant_id)
                raise Ignore()  # acked, no result: a parked chord member is not counted as done
            try:
                return fn(self, *args, **kwargs)
            finally:
                try:
                    if gate.leave(services):  # some tenant has parked steps: send what has room
                        release(self.app)
                except RedisError:  # Redis away: the watchdog releases them once it is back
                    log.warning("could not release parked steps after %s", self.name, exc_info=True)

        return run

    return wrap


@worker_process_init.connect  # type: ignore[untyped-decorator]  # Celery ships no type hints
def _join(**_: object) -> None:
    try:
        fairness().join(runtime.services())
    except Exception:
        log.warning("worker process could not register its slot", exc_info=True)


@worker_process_shutdown.connect  # type: ignore[untyped-decorator]  # Celery ships no type hints
def _part(**_: object) -> None:
    try:
        fairness().part(runtime.services())
    except Exception:
        log.debug("worker process could not unregister its slot", exc_info=True)


__all__ = ["fair_step", "release", "sender"]
