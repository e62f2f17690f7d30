"""One delivery attempt as a plain function (the `deliver` Celery task and the inline executor wrap it).

Exactly once per channel: a delivery already `delivered` is skipped (a task redelivered after its worker
died finds the earlier success), and a Redis lock keeps two copies of the task from posting at the same
time. A worker dying *during* the send is the one case that can send twice. The webhook receiver
deduplicates it by ``webhook-id`` / ``Idempotency-Key`` (the delivery id on every attempt); an e-mail
keeps one ``Message-ID``; a helpdesk note carries ``Sleuth ref <delivery id>``, and an attempt after an
unknown outcome (`Delivery.started` above `attempts`, or an `uncertain` last attempt) looks for it first.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from redis.exceptions import LockError

from adapters.backoff import Backoff
from bootstrap import Services
from config.settings import Settings
from investigation.errors import PermanentError, ReceiverRejected, ReceiverUnavailable, TransientError
from investigation.ports import Delivered, Deliverer
from storage import repositories as repo
from tasks import delivery_channels as channels_of

log = logging.getLogger(__name__)

OutcomeStatus = Literal["delivered", "pending", "dead", "skipped"]
MAX_ERROR_CHARS = 500
LOCK_TIMEOUTS = 3  # a helpdesk attempt may list comments before it posts: a few requests' worth


@dataclass(frozen=True)
class DeliveryOutcome:
    """What one call did: `retry_in` (seconds) is set when the caller should try again later."""

    status: OutcomeStatus
    retry_in: float | None
    attempt: int


@dataclass(frozen=True)
class _Job:
    investigation_id: str
    tenant_id: str
    channel: str
    target: dict[str, object]
    status: str
    attempts: int
    started: int
    last_uncertain: bool

    @property
    def resume(self) -> bool:
        """An earlier attempt's outcome is unknown: it began and was never recorded, or it said so."""
        return self.started > self.attempts or self.last_uncertain


def backoff_policy(settings: Settings) -> Backoff:
    """The retry policy of every delivery channel."""
    return Backoff(settings.delivery.webhook_backoff_base, settings.delivery.webhook_backoff_max,
                         settings.delivery.webhook_max_attempts)


@contextmanager
def _exclusive(services: Services, delivery_id: str, ttl: float) -> Iterator[float | None]:
    """Hold the per-delivery lock; yields None when held by us, else the seconds until it frees up."""
    if not services.settings.redis_url:  # no Redis (a bare inline run): the DB state alone decides
        yield None
        return
    name = f"{services.settings.redis_prefix}:lock:delivery:{delivery_id}"
    lock = services.redis.lock(name, timeout=ttl, blocking=False)
    if not lock.acquire(blocking=False):
        remaining_ms = services.redis.pttl(name)
        yield max(1.0, remaining_ms / 1000.0) if remaining_ms and remaining_ms > 0 else 1.0
        return
    try:
        yield None
    finally:
        try:
            lock.release()
        except LockError:  # expired meanwhile: someone else may hold it now; theirs to release
            log.warning("delivery lock %s expired before release", delivery_id)


def _load(services: Services, delivery_id: str) -> _Job:
    with services.session() as session:
        d = repo.get_delivery(session, delivery_id=delivery_id)
        logged = repo.list_attempts(session, delivery_id=delivery_id) if d.attempts else []
        uncertain = bool(logged and logged[-1].uncertain)
        return _Job(d.investigation_id, d.tenant_id, d.channel, dict(d.target), d.status, d.attempts,
                    d.started, uncertain)


def _payload_and_secret(services: Services, job: _Job) -> tuple[dict[str, Any], str]:
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=job.investigation_id)
        payload = repo.investigation_view(session, investigation=inv)
        tenant = repo.get_tenant(session, tenant_id=job.tenant_id)
    secret = repo.open_webhook_secret(tenant, services.secret_box())
    if job.channel != "webhook":
        payload = channels_of.channel_payload(services, job.investigation_id, payload)
    payload = channels_of.with_feedback_links(services, job.tenant_id, payload,
                                              channels_of.rater_of(job.channel, job.target))
    return payload, secret


def attempt_delivery(services: Services, delivery_id: str, *,
                     deliverers: Mapping[str, Deliverer] | None = None) -> DeliveryOutcome:
    """Make the next attempt of one delivery, record it, and say what happens next.

    delivered → done; a transient failure → "pending" with `retry_in` (or "dead" once the attempts are
    exhausted); a permanent failure → "dead" at once; nothing to do (already delivered or dead, or
    another worker is on it, or the channel asked to be left alone for a while) → "skipped" / "pending".
    `deliverers` (by channel type) replaces the deliverer a channel would get, for tests.
    """
    settings = services.settings
    job = _load(services, delivery_id)
    if job.status != "pending":
        return DeliveryOutcome("skipped", None, job.attempts)
    pace = channels_of.paced_for(services, channels_of.channel_key(job.channel, job.target))
    if pace > 0:
        return DeliveryOutcome("pending", pace, job.attempts)
    ttl = (
        channels_of.timeout_of(services, job.channel) * LOCK_TIMEOUTS + settings.delivery.delivery_lock_margin
    )
    with _exclusive(services, delivery_id, ttl) as busy_for:
        if busy_for is not None:
            return DeliveryOutcome("pending", busy_for, job.attempts)
        job = _load(services, delivery_id)  # re-read under the lock
        if job.status != "pending":
            return DeliveryOutcome("skipped", None, job.attempts)
        return _attempt(services, delivery_id, job, deliverers)


def _attempt(services: Services, delivery_id: str, job: _Job,
             injected: Mapping[str, Deliverer] | None) -> DeliveryOutcome:
    policy = backoff_policy(services.settings)
    number = job.attempts + 1
    status_code: int | None = None
    error: str | None = None
    retry_after: float | None = None
    transient = uncertain = False
    sent: Delivered | None = None
    deliverer: Deliverer | None = None
    started = time.perf_counter()
    try:
        if injected is not None and job.channel in injected:
            deliverer = injected[job.channel]
        else:
            deliverer = channels_of.build_deliverer(services, kind=job.channel, tenant_id=job.tenant_id,
                                                    target=job.target)
        payload, secret = _payload_and_secret(services, job)
        with services.session() as session:  # from here on, a death leaves the outcome unknown
            repo.mark_started(session, delivery_id=delivery_id, number=number)
        sent = deliverer.deliver(delivery_id=delivery_id, target=job.target, payload=payload, secret=secret,
                                 resume=job.resume)
        status_code = sent.status_code
    except ReceiverUnavailable as exc:  # the receiver's own answer (or silence): its status is logged
        transient, retry_after, error = True, exc.retry_after, str(exc)
        status_code, uncertain = exc.status_code, exc.uncertain
    except TransientError as exc:
        transient, retry_after, error = True, exc.retry_after, str(exc)
    except ReceiverRejected as exc:
        error, status_code = str(exc), exc.status_code
    except PermanentError as exc:
        error = str(exc)
    except Exception as exc:  # a bug in a channel: bounded retries, recorded, never a hang
        log.exception("deliverer %s raised unexpectedly for %s", job.channel, delivery_id)
        transient, error, uncertain = True, f"{type(exc).__name__}: {exc}", True
    finally:
        if deliverer is not None and not (injected and job.channel in injected):
            deliverer.close()  # one it built: an injected deliverer belongs to the caller
    duration_ms = (time.perf_counter() - started) * 1000.0
    error = error[:MAX_ERROR_CHARS] if error else None
    key = channels_of.channel_key(job.channel, job.target)
    if status_code == 429 and retry_after:
        channels_of.slow_down(services, key, retry_after)  # every delivery on this channel waits
    elif sent is not None:
        channels_of.slow_down(services, key, channels_of.pace_after(sent))
    note = sent.detail[:MAX_ERROR_CHARS] if sent is not None and sent.detail is not None else None

    retry_in: float | None = None
    if error is None:
        status: OutcomeStatus = "delivered"
    elif transient and not policy.exhausted(number):
        status = "pending"
        retry_in = policy.delay(number, retry_after)
    else:
        status = "dead"

    with services.session() as session:
        # Mark first: if we die between the two writes, a redelivered task sees "delivered" and skips.
        if status != "pending":
            repo.mark_delivery(session, delivery_id=delivery_id, status=status, error=error)
        # Also bumps `attempts` and `last_error`; a redelivered task gets the logged row back.
        repo.record_attempt(session, delivery_id=delivery_id, number=number, status_code=status_code,
                            error=error, duration_ms=duration_ms, detail=note, uncertain=uncertain)
        repo.add_event(session, investigation_id=job.investigation_id,
                       step_key=f"deliver:{delivery_id}:{number}", kind="delivery", hop=0,
                       data={"delivery_id": delivery_id, "channel": job.channel, "attempt": number,
                             "outcome": status, "status_code": status_code, "error": error, "detail": note,
                             "resumed": job.resume, "duration_ms": round(duration_ms, 1),
                             "retry_in": retry_in})
    log.info("delivery %s attempt %d: %s (%s)", delivery_id, number, status, status_code or error)
    return DeliveryOutcome(status, retry_in, number)
