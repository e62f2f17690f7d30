"""Liveness (``/healthz``: the process answers) and readiness (``/readyz``: everything it needs answers).

`/readyz` needs no key, so its body says only `ok`/`failed`/`timeout` per dependency: the exception (host,
port, database name, paths) goes to the server log, never to the caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from api.deps import ServicesDep
from bootstrap import Services

log = logging.getLogger(__name__)
router = APIRouter(tags=["health"])

CHECK_TIMEOUT_SECONDS = 3.0
BUILD_TIMEOUT_SECONDS = 30.0  # building the backends may load an embedding model, once per process


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is alive (no dependency is touched)."""
    return {"status": "ok"}


def _database(services: Services) -> None:
    with services.engine.connect() as connection:
        connection.execute(text("SELECT 1"))


def _redis(services: Services) -> None:
    if not services.redis.ping():
        raise RuntimeError("PING did not answer PONG")


def _backend_checks(services: Services) -> dict[str, Callable[[], None]]:
    checks: dict[str, Callable[[], None]] = {}
    for name, backend in services.backends.items():
        def ping(backend: Any = backend, name: str = name) -> None:
            if not backend.ping():
                raise RuntimeError(f"{name} ping failed")
        checks[f"search:{name}"] = ping
    return checks


async def _run(name: str, check: Callable[[], None]) -> str:
    try:
        await asyncio.wait_for(asyncio.to_thread(check), timeout=CHECK_TIMEOUT_SECONDS)
    except TimeoutError:
        log.warning("readiness check %s timed out after %gs", name, CHECK_TIMEOUT_SECONDS)
        return "timeout"
    except Exception as exc:  # noqa: BLE001 - whatever broke, readiness reports it by name only
        log.warning("readiness check %s failed: %s: %s", name, type(exc).__name__, exc)
        return "failed"
    return "ok"


@router.get("/readyz", responses={503: {"description": "A dependency is down (named in `failed`; "
                                                     "details only in the server log)"}})
async def readyz(services: ServicesDep) -> JSONResponse:
    """Database, Redis and every search backend answer; 503 naming each check that failed (by name and
    `failed`/`timeout` only)."""
    checks: dict[str, Callable[[], None]] = {
        "database": lambda: _database(services),
        "redis": lambda: _redis(services),
    }
    results: dict[str, str] = {}
    try:
        checks.update(await asyncio.wait_for(asyncio.to_thread(_backend_checks, services),
                                             timeout=BUILD_TIMEOUT_SECONDS))
    except Exception as exc:  # noqa: BLE001 - the backends could not even be built (config, index...)
        log.warning("readiness: the search backends could not be built: %s: %s", type(exc).__name__, exc)
        results["search"] = "failed"
    names = list(checks)
    outcomes = await asyncio.gather(*(_run(n, checks[n]) for n in names))
    results.update(zip(names, outcomes, strict=True))
    failed = sorted(n for n, r in results.items() if r != "ok")
    body = {"status": "ok" if not failed else "unavailable", "checks": results, "failed": failed}
    return JSONResponse(body, status_code=200 if not failed else 503)
