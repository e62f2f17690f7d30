"""Celery tasks: thin shells over `tasks.steps` (serialisation, retries, acks); canvas in `workflow`."""

from __future__ import annotations

import contextlib
import functools
import random
import time
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task
from celery.utils.log import get_task_logger
from redis.exceptions import LockError, RedisError

from adapters.backoff import Backoff
from investigation.errors import TransientError
from observability import step_scope
from storage.db import database_unavailable_errors
from tasks import steps, workflow
from tasks.delivery_step import attempt_delivery
from tasks.facts import tenant_of
from tasks.fair_steps import fair_step
from tasks.fair_steps import release as release_steps
from tasks.fairness import fairness
from tasks.redrive import redrive
from tasks.tool_step import call_tool
from workers import broker, names, runtime

log = get_task_logger(__name__)

_COMMON: dict[str, Any] = {"bind": True, "acks_late": True, "reject_on_worker_lost": True}
# Steps whose return value nobody reads (the next step is sent by `_dispatch`, not chained on a result): no
# write to the result backend. Only a hop's chord members (retrieve, tool_call) keep theirs: the chord
# counts them to start the reducer. Flower still sees every state, from the task events.
_STEP: dict[str, Any] = {**_COMMON, "ignore_result": True}
# The database unreachable (restart, failover, network): the step is sent again later, not failed. Waits
# double from 1 s to 8 s (half of each jittered), for 30 retries: at least ~110 s of outage is ridden out,
# about the deadline; a step that finds its investigation terminal afterwards does nothing.
DB_RETRIES = 30
WATCHDOG_LOCK_SECONDS = 30
DB_BACKOFF_CAP = 8.0


DB_BACKOFF = Backoff(base=1.0, cap=DB_BACKOFF_CAP, max_attempts=DB_RETRIES + 2, jitter="equal")


def db_retry_delay(retries: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds before the next try of a step that found the database unreachable `retries` times before
    (a task without a retry limit keeps waiting the cap: the policy is never exhausted here)."""
    delay = DB_BACKOFF.delay(min(retries, DB_RETRIES) + 1, rand=rand)
    return DB_BACKOFF.cap if delay is None else delay


def retry_when_database_down(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Steps are idempotent: one that failed because the database was unreachable runs again later."""

    @functools.wraps(fn)
    def run(self: Task, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except database_unavailable_errors() as exc:
            delay = db_retry_delay(self.request.retries)
            log.warning(
                "%s: database unavailable (%s); retry %d in %.1fs",
                self.name,
                type(exc).__name__,
                self.request.retries + 1,
                delay,
            )
            # A task without a retry limit (deliver) keeps none; the others may retry DB_RETRIES times.
            limit = None if self.max_retries is None else max(DB_RETRIES, self.max_retries)
            raise self.retry(
                exc=exc, countdown=broker.countdown(runtime.settings(), delay), max_retries=limit
            ) from exc

    return run


def _dispatch(app: Any, inv_id: str, nxt: steps.Next) -> None:
    """Enqueue `nxt` at its tenant's queue priority; once the investigation is terminal, its slot is given
    back and a held one of its tenant may start."""
    if nxt.kind == steps.NextKind.DONE:
        return
    services, fair = runtime.services(), fairness()
    if nxt.kind == steps.NextKind.DELIVER:
        _announce_finished(services, inv_id)
    tenant_id = tenant_of(services, inv_id)
    workflow.dispatch(app, inv_id, nxt, priority=fair.priority(services, tenant_id))
    if nxt.kind == steps.NextKind.DELIVER:
        fair.finished(services, tenant_id, inv_id, lambda i: workflow.launch(app, i))


def _announce_finished(services: Any, inv_id: str) -> None:
    """The investigation is terminal (committed): the API's requests long-polling it answer now
    (`api.finished`). Before the deliveries are sent; a lost announcement only makes them answer a little
    later, so Redis failing here never fails the step."""
    try:
        services.state.announce_finished(inv_id)
    except (TransientError, RedisError) as exc:
        log.warning("could not announce that %s finished: %s", inv_id, exc)


@shared_task(name=names.T_START, autoretry_for=(TransientError,), max_retries=3, retry_backoff=True,
             **_STEP)
@retry_when_database_down
@fair_step(inv_arg=0)
def start(self: Task, inv_id: str) -> dict[str, Any]:
    nxt = steps.start(runtime.services(), inv_id)
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


@shared_task(name=names.T_RETRIEVE, autoretry_for=(TransientError,), max_retries=2, retry_backoff=True,
             **_COMMON)
@retry_when_database_down
@fair_step(inv_arg=0)
def retrieve(self: Task, inv_id: str, hop: int, index: int, engine: str) -> dict[str, Any]:
    return steps.retrieve(runtime.services(), inv_id, hop, index, engine)


@shared_task(name=names.T_TOOL, autoretry_for=(TransientError,), max_retries=2, retry_backoff=True,
             **_COMMON)
@retry_when_database_down
@fair_step(inv_arg=0)
def tool_call(self: Task, inv_id: str, hop: int, name: str) -> dict[str, Any]:
    """One declared tool of a hop (its own queue); retries of 5xx happen inside, within its timeout."""
    return call_tool(runtime.services(), inv_id, hop, name)


@shared_task(name=names.T_REDUCE, autoretry_for=(TransientError,), max_retries=3, retry_backoff=True,
             **_STEP)
@retry_when_database_down
@fair_step(inv_arg=1)
def reduce(self: Task, _results: list[Any], inv_id: str, hop: int) -> dict[str, Any]:
    # The chord's member results are summaries only; the reducer re-reads the hits from Redis.
    services = runtime.services()
    nxt = synthesis_in_place(services, inv_id, steps.reduce(services, inv_id, hop, owner=self.request.id))
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


def _chord_error(task: Task, failed_id: str) -> str:
    """What the chord stored as its error under `failed_id` (a member's exception), or a plain reason."""
    try:
        meta = task.app.backend.get_task_meta(failed_id)
    except (RedisError, OSError, ValueError):  # the reason is a nicety: the investigation fails either way
        meta = {}
    if meta.get("status") == "FAILURE" and meta.get("result") is not None:
        return repr(meta["result"])
    return "a retrieval, tool call or the reducer of the hop failed"


def synthesis_in_place(services: Any, inv_id: str, nxt: steps.Next) -> steps.Next:
    """What a reducer does when its hop ends the loop. The heuristic reasoner's synthesis makes no LLM call:
    the reducer answers at once, in its own process, instead of sending `sleuth.synthesize` to the `llm`
    queue: one task, one queue wait and one hand-off between processes fewer per investigation. It has its own
    log ids, span and step duration (the reducer's duration then includes it). With an LLM, synthesis is sent
    to the `llm` queue, where a slow call holds no reducer. A reducer that fails or dies during synthesis is
    retried or redelivered
    like any reducer: its hop is already reduced, so it goes straight to synthesis again."""
    if nxt.kind != steps.NextKind.SYNTHESIZE or services.settings.llm.provider != "heuristic":
        return nxt
    with step_scope(names.T_SYNTHESIZE, inv_id, tenant_id=tenant_of(services, inv_id), hop=nxt.hop):
        return steps.synthesize(services, inv_id)


@shared_task(name=names.T_HOP_FAILED, **_STEP)
def hop_failed(self: Task, failed_id: str, inv_id: str, hop: int) -> dict[str, Any]:
    """Error callback of a hop's chord: the investigation ends `failed` with the reason, never hangs.

    Celery sends a bound task's error callback as a task with the failed task's id first (for a chord: its
    body's, under which the chord's error is stored, when it has been by then); the older signature with the
    request and exception first never matched how it is called, and the callback failed, so the investigation
    waited for its deadline (`tests/integration/tasks/test_queue.py`)."""
    reason = _chord_error(self, failed_id)
    log.error("hop %s of %s failed: %s", hop, inv_id, reason)
    nxt = steps.fail(runtime.services(), inv_id, reason="error", error=f"hop {hop}: {reason}"[:500])
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


@shared_task(name=names.T_SYNTHESIZE, autoretry_for=(TransientError,), max_retries=3, retry_backoff=True,
             **_STEP)
@retry_when_database_down
@fair_step(inv_arg=0)
def synthesize(self: Task, inv_id: str) -> dict[str, Any]:
    nxt = steps.synthesize(runtime.services(), inv_id)
    _dispatch(self.app, inv_id, nxt)
    return nxt.as_json()


@shared_task(name=names.T_DELIVER, max_retries=None, **_STEP)
@retry_when_database_down
def deliver(self: Task, delivery_id: str) -> dict[str, Any]:
    outcome = attempt_delivery(runtime.services(), delivery_id)
    if outcome.status == "pending" and outcome.retry_in is not None:
        raise self.retry(countdown=broker.countdown(runtime.settings(), outcome.retry_in))
    return {"delivery_id": delivery_id, "status": outcome.status, "attempt": outcome.attempt}


@shared_task(name=names.T_WATCHDOG, **_STEP)
def watchdog(self: Task) -> dict[str, Any]:
    """Beat task: investigations past their deadline end `failed: deadline`; work a dead worker dropped is
    re-driven (`tasks.redrive`). One run per interval, however many beats or redeliveries fire it, and
    never two at once: a run that looks for lost work waits for worker replies (seconds), and its message
    has the first queue priority, so overlapping runs could occupy every worker process."""
    services = runtime.services()
    interval = services.settings.workers.watchdog_interval
    if not services.state.once(f"watchdog:{int(time.time() // interval)}", ttl=max(2, int(interval * 2))):
        return {"skipped": "another watchdog run owns this interval"}
    # A run takes two inspect timeouts and a little more when it looks for lost work (two rounds of worker
    # inspection); the lock outlives that, but not much more: a run killed with its worker must not silence
    # the watchdog for long.
    running = services.redis.lock(f"{services.settings.redis_prefix}:watchdog:running",
                                  timeout=max(WATCHDOG_LOCK_SECONDS, 3 * interval), blocking=False)
    if not running.acquire(blocking=False):
        return {"skipped": "the previous watchdog run is still going"}
    try:
        moved = []
        for inv_id in steps.overdue(services):
            nxt = steps.fail(services, inv_id, reason="deadline", error="deadline passed before completion")
            _dispatch(self.app, inv_id, nxt)
            moved.append(inv_id)
        released = fairness().release_held(services, lambda i: workflow.launch(self.app, i))
        steps_sent = release_steps(self.app, prune=True)  # parked steps whose tenant has room again
        return {"failed": moved, "released": released, "steps released": steps_sent,
                "redriven": redrive(self.app, services).as_json()}
    finally:
        with contextlib.suppress(LockError):  # expired after the time limit: nothing to give back
            running.release()
