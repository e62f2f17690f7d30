"""Attempt limiting for credentials: failed sign-ins, bad sign-in links and bad Bearer keys are counted per
client address (and per tenant, when the credential names one); past the limit every attempt from there is
refused with 429 + Retry-After until the window ends, before the credential is even looked at."""

from __future__ import annotations

import logging

import redis
from fastapi import Request

from api.deps import get_services
from investigation.errors import SleuthError, TooManyRequests
from storage.rate_limit import FailureCounter

log = logging.getLogger(__name__)


def counter(request: Request) -> FailureCounter | None:
    """The app's counter (tests put one with their own clock on ``app.state.auth_failures``); None when
    the API has no Redis."""
    state = request.app.state
    existing: FailureCounter | None = getattr(state, "auth_failures", None)
    if existing is not None:
        return existing
    services = get_services(request)
    settings = services.settings
    if not settings.redis_url:
        return None
    built = FailureCounter(services.redis, settings.redis_prefix, limit=settings.security.auth_failure_limit,
                           window_seconds=settings.security.auth_failure_window_seconds)
    state.auth_failures = built
    return built


def subjects(request: Request, tenant_id: str | None = None) -> list[str]:
    address = request.client.host if request.client is not None else "unknown"
    return [f"addr:{address}"] + ([f"tenant:{tenant_id}"] if tenant_id else [])


def check(request: Request, tenant_id: str | None = None) -> None:
    """Raise TooManyRequests (429 + Retry-After) when this address or tenant is over the limit. An
    unreachable Redis lets the attempt through (the credential check itself still applies)."""
    limiter = counter(request)
    if limiter is None:
        return
    try:
        wait = limiter.retry_after(subjects(request, tenant_id))
    except (redis.RedisError, SleuthError) as exc:
        log.warning("attempt limiting unavailable: %s", exc)
        return
    if wait is not None:
        raise TooManyRequests(
            "auth_failures", "too many failed sign-in attempts; retry later", retry_after=wait
        )


def failed(request: Request, tenant_id: str | None = None) -> None:
    """Count one failed attempt from this address (and against `tenant_id`)."""
    limiter = counter(request)
    if limiter is None:
        return
    try:
        limiter.record(subjects(request, tenant_id))
    except (redis.RedisError, SleuthError) as exc:
        log.warning("attempt limiting unavailable: %s", exc)
