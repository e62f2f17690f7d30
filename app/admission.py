"""Fairness between tenants: per-tenant in-flight caps and intake rate at intake, priorities at the queues.

At most `max_in_flight` investigations of a tenant run at once; the others are persisted (`queued`) and
held back in order in a per-tenant Redis list, then launched one by one as running ones finish (`release`,
called after every terminal step and by the watchdog). One tenant's burst therefore occupies at most its
cap of worker slots, and another tenant's question goes straight to the queues. Admitted ids live in a
Redis set pruned against the database whenever a decision could depend on it (a set that already looks
under the cap admits at once, in one round trip), so a lost release can only delay, never leak a slot.

At the queues, every step an investigation sends carries its tenant's `priority`: the fewer investigations
a tenant has admitted or waiting, the lower the number, and workers take the lowest number first across
all queues. A tenant asking one question is served ahead of the backlog of a tenant that submitted a
hundred: its steps wait for the steps already running, not for the queued burst.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from bootstrap import Services
from investigation.errors import TooManyRequests
from storage import repositories as repo
from storage.models import Tenant, utcnow
from storage.rate_limit import TokenBucketLimiter
from workers.names import PRIORITY_STEPS

if TYPE_CHECKING:
    from redis.lock import Lock

log = logging.getLogger(__name__)

Launcher = Callable[[str], None]
LOCK_SECONDS = 10
# while held, the watchdog leaves it alone; the run's own deadline starts at release
HELD_DEADLINE = timedelta(days=1)


def max_in_flight(services: Services, tenant: Tenant) -> int:
    return int((tenant.limits or {}).get("max_in_flight", services.settings.limits.tenant_max_in_flight))


def intake_per_minute(services: Services, tenant: Tenant) -> int:
    return int(
        (tenant.limits or {}).get("intake_per_minute", services.settings.limits.tenant_intake_per_minute)
    )


def check_rate(services: Services, tenant: Tenant, *, clock: Callable[[], float] | None = None) -> None:
    """Take one submission from the tenant's bucket, or raise TooManyRequests saying when to retry."""

    per_minute = intake_per_minute(services, tenant)
    if per_minute <= 0 or not services.settings.redis_url:  # no Redis: no queue, nothing to protect
        return
    limiter = TokenBucketLimiter(services.redis, services.settings.redis_prefix, clock=clock)
    wait = limiter.try_acquire(f"intake:{tenant.id}", {"requests": 1}, {"requests": per_minute})
    if wait > 0:
        raise TooManyRequests("intake_per_minute", f"tenant intake limit of {per_minute} investigations per "
                              f"minute reached; retry in {wait:.1f}s", retry_after=wait)


def _held_key(services: Services, tenant_id: str) -> str:
    return f"{services.settings.redis_prefix}:fair:held:{tenant_id}"


def _running_key(services: Services, tenant_id: str) -> str:
    return f"{services.settings.redis_prefix}:fair:running:{tenant_id}"


def _tenants_key(services: Services) -> str:
    return f"{services.settings.redis_prefix}:fair:tenants"


def _lock_key(services: Services, tenant_id: str) -> str:
    return f"{services.settings.redis_prefix}:fair:lock:{tenant_id}"


def _lock(services: Services, tenant_id: str) -> Lock:
    lock: Lock = services.redis.lock(_lock_key(services, tenant_id), timeout=LOCK_SECONDS,
                                     blocking_timeout=LOCK_SECONDS)
    return lock


def _ids(raw: Iterable[object]) -> list[str]:
    return [r.decode() if isinstance(r, bytes) else str(r) for r in raw]


def _running(services: Services, tenant_id: str, admitted: list[str] | None = None) -> set[str]:
    """The tenant's admitted investigations that are still active (finished ones are pruned: the
    database is the truth, so a lost release never leaks a slot). `admitted`: the running set as the
    caller just read it."""
    key = _running_key(services, tenant_id)
    if admitted is None:
        admitted = _ids(services.redis.smembers(key))
    if not admitted:
        return set()
    with services.session() as session:
        still = repo.active_among(session, ids=admitted)
    gone = [a for a in admitted if a not in still]
    if gone:
        services.redis.srem(key, *gone)
    return still


def _launch(services: Services, tenant_id: str, inv_id: str, launch: Launcher, in_process: bool) -> None:
    """Launch outside the lock; on failure the slot is given back. `in_process`: `launch` runs the whole
    investigation (the inline executor), so when it returns the investigation is over and its slot is given
    back too, as a Celery run's terminal step does (`finished`; held ones wait for the next release)."""
    try:
        launch(inv_id)
    except Exception:
        services.redis.srem(_running_key(services, tenant_id), inv_id)
        raise
    if in_process:
        services.redis.srem(_running_key(services, tenant_id), inv_id)


# The common case in one round trip: nothing held, no decision under way (the tenant's lock is free) and
# fewer ids in the running set than the cap. Finished ones still listed only make the set look fuller, so
# "fewer than the cap" can only be true when the tenant really is under it: admitted, nothing to prune.
# Anything else (0) is decided under the lock, the set pruned against the database first.
_ADMIT_AT_ONCE = """
redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[4]) == 0 and redis.call('LLEN', KEYS[2]) == 0
   and redis.call('SCARD', KEYS[3]) < tonumber(ARGV[3]) then
  redis.call('SADD', KEYS[3], ARGV[2])
  return 1
end
return 0
"""


@functools.lru_cache(maxsize=32)
def _registered(client: Any, source: str) -> Any:
    return client.register_script(source)


def _script(services: Services, source: str) -> Any:
    """`source` as a script of this Services' client: EVALSHA, the source sent only once per Redis."""
    return _registered(services.redis, source)


def _admitted_at_once(services: Services, tenant_id: str, inv_id: str, cap: int) -> bool:
    keys = [_tenants_key(services), _held_key(services, tenant_id), _running_key(services, tenant_id),
            _lock_key(services, tenant_id)]
    return bool(_script(services, _ADMIT_AT_ONCE)(keys=keys, args=[tenant_id, inv_id, cap]))


def admit(
    services: Services, tenant: Tenant, inv_id: str, launch: Launcher, *, in_process: bool = False
) -> bool:
    """Launch `inv_id` now (True) or hold it behind the tenant's earlier ones (False). `inv_id` is
    already persisted as queued. `in_process`: `launch` runs it to its end (`_launch`)."""
    cap = max_in_flight(services, tenant)
    if cap <= 0 or not services.settings.redis_url:
        launch(inv_id)
        return True
    if _admitted_at_once(services, tenant.id, inv_id, cap):
        _launch(services, tenant.id, inv_id, launch, in_process)
        return True
    key = _held_key(services, tenant.id)
    with _lock(services, tenant.id):
        # One round trip: the tenant known to fairness, its held queue and its running set.
        pipe = services.redis.pipeline(transaction=False)
        pipe.sadd(_tenants_key(services), tenant.id)
        pipe.llen(key)
        pipe.smembers(_running_key(services, tenant.id))
        _, waiting, admitted = pipe.execute()
        held = int(waiting)
        running = len(_running(services, tenant.id, _ids(admitted)))
        now = held == 0 and running < cap
        if now:
            services.redis.sadd(_running_key(services, tenant.id), inv_id)
        else:
            with services.session() as session:
                repo.update_investigation(
                    session, investigation_id=inv_id, deadline_at=utcnow() + HELD_DEADLINE
                )
            services.redis.rpush(key, inv_id)
    if now:
        _launch(services, tenant.id, inv_id, launch, in_process)
        return True
    log.info("investigation %s held back: tenant %s has %d running (cap %d), %d waiting", inv_id, tenant.id,
             running, cap, held + 1)
    return False


def release(services: Services, tenant_id: str, launch: Launcher) -> list[str]:
    """Launch the tenant's oldest held investigations while it is under its cap; the ids launched."""
    key = _held_key(services, tenant_id)
    if not services.redis.llen(key):
        return []
    chosen: list[str] = []
    with _lock(services, tenant_id):
        held = _ids(services.redis.lrange(key, 0, -1))
        with services.session() as session:
            tenant = repo.get_tenant(session, tenant_id=tenant_id)
            still = repo.active_among(session, ids=held)
        for gone in set(held) - still:  # failed by the watchdog (deadline) while waiting
            services.redis.lrem(key, 0, gone)
        cap = max_in_flight(services, tenant)
        running = len(_running(services, tenant_id))
        for inv_id in (h for h in held if h in still):
            if cap > 0 and running + len(chosen) >= cap:
                break
            services.redis.sadd(_running_key(services, tenant_id), inv_id)
            services.redis.lrem(key, 1, inv_id)
            chosen.append(inv_id)
        with services.session() as session:  # the deadline is a budget of the run: it starts now
            for inv_id in chosen:
                inv = repo.get_investigation(session, investigation_id=inv_id)
                seconds = int(
                    (inv.budget or {}).get("deadline_seconds") or services.settings.limits.deadline_seconds
                )
                repo.update_investigation(session, investigation_id=inv_id,
                                          deadline_at=utcnow() + timedelta(seconds=seconds))
    for i, inv_id in enumerate(chosen):
        try:
            launch(inv_id)
        except Exception:
            # the failed one and the rest, in order, at the head of the line
            for back in reversed(chosen[i:]):
                services.redis.srem(_running_key(services, tenant_id), back)
                services.redis.lpush(key, back)
            raise
    return chosen


def finished(services: Services, tenant_id: str, inv_id: str, launch: Launcher) -> list[str]:
    """A terminal investigation gives its slot back at once (its tenant's load drops, so the step caps of
    `app.admission_steps` follow), and the tenant's next held ones start."""
    services.redis.srem(_running_key(services, tenant_id), inv_id)
    return release(services, tenant_id, launch)


def known_tenants(services: Services) -> list[str]:
    """Every tenant that went through admission with an in-flight cap (they are few: never pruned)."""
    return _ids(services.redis.smembers(_tenants_key(services)))


def prune(services: Services) -> None:
    """Drop finished investigations from every tenant's running set (the watchdog's safety net for a
    terminal step whose `finished` was lost: a stale entry would keep its tenant looking active)."""
    for tenant_id in known_tenants(services):
        _running(services, tenant_id)


def loads(services: Services) -> dict[str, int]:
    """Each known tenant's load: investigations admitted and still listed as running, plus held ones."""
    tenants = known_tenants(services)
    pipe = services.redis.pipeline()
    for tenant_id in tenants:
        pipe.scard(_running_key(services, tenant_id))
        pipe.llen(_held_key(services, tenant_id))
    counts = pipe.execute()
    return {t: int(counts[2 * i]) + int(counts[2 * i + 1]) for i, t in enumerate(tenants)}


def priority(services: Services, tenant_id: str) -> int:
    """The queue priority of the tenant's next step: 0 (first) for a tenant with one investigation running
    or waiting, then one level per doubling of that load (log2 buckets: tenants of similar load share a
    level and keep FIFO among themselves), at most the last step of `PRIORITY_STEPS`."""

    if not services.settings.redis_url:
        return 0
    pipe = services.redis.pipeline()
    pipe.scard(_running_key(services, tenant_id))
    pipe.llen(_held_key(services, tenant_id))
    running, held = pipe.execute()
    load = max(1, int(running) + int(held))
    return min(PRIORITY_STEPS[-1], math.ceil(math.log2(load)))


def held_tenants(services: Services) -> list[str]:
    """Tenants with investigations waiting (for the watchdog's periodic release)."""
    prefix = _held_key(services, "")
    return [k.decode()[len(prefix):] if isinstance(k, bytes) else str(k)[len(prefix):]
            for k in services.redis.scan_iter(match=prefix + "*", count=500)]


def held_ids(services: Services) -> set[str]:
    """Every investigation currently held back (the re-drive must not start these)."""
    ids: set[str] = set()
    for tenant_id in held_tenants(services):
        ids.update(_ids(services.redis.lrange(_held_key(services, tenant_id), 0, -1)))
    return ids


__all__ = [
    "admit",
    "check_rate",
    "finished",
    "held_ids",
    "held_tenants",
    "intake_per_minute",
    "known_tenants",
    "loads",
    "max_in_flight",
    "priority",
    "prune",
    "release",
]
