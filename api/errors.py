"""The ONE mapping from Sleuth's error tree to HTTP responses (registered by `create_app`).

    ValidationFailed → 422 {"detail": [{"loc": ["body", field], "msg": ...}]}
    PayloadTooLarge  → 413      NotFound       → 404      BudgetExceeded → 429 (+ Retry-After when known)
    Conflict         → 409
    NotAuthenticated → 401      Forbidden      → 403      TransientError → 503 (+ Retry-After)
    PermanentError   → 400      other SleuthError → 500
    the database unreachable (SQLAlchemy OperationalError, InterfaceError, pool timeout) → 503 + Retry-After
    FastAPI's RequestValidationError → 422, each error's type, loc, msg and ctx; never the input it refused
    (a secret over its size limit, a body that is not JSON)
"""

from __future__ import annotations

import logging
import math

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from investigation.errors import (
    BudgetExceeded,
    Conflict,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    PermanentError,
    SleuthError,
    TooManyRequests,
    TransientError,
    ValidationFailed,
)
from storage.db import database_unavailable_errors

log = logging.getLogger(__name__)
DATABASE_RETRY_AFTER = 5  # seconds: a failover or restart is usually back by then; clients keep retrying


class NotAuthenticated(Forbidden):
    """Raised when a request carries no API key, or one that matches no tenant (401, not 403)."""


class FieldError(ValidationFailed):
    """Raised when a field of a request is invalid; `loc` is the full location, e.g. ("body", "budget",
    "max_hops")."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(".".join(str(p) for p in loc), message)
        self.loc = loc


_STATUS: tuple[tuple[type[SleuthError], int], ...] = (
    (ValidationFailed, 422),
    (PayloadTooLarge, 413),
    (Conflict, 409),
    (NotFound, 404),
    (NotAuthenticated, 401),
    (Forbidden, 403),
    (BudgetExceeded, 429),
    (TransientError, 503),
    (PermanentError, 400),
)


def status_of(exc: SleuthError) -> int:
    """The HTTP status for an error of the tree (most specific class first)."""
    for cls, code in _STATUS:
        if isinstance(exc, cls):
            return code
    return 500


async def sleuth_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """Render any `SleuthError` as JSON with the status of `status_of`."""
    assert isinstance(exc, SleuthError)
    code = status_of(exc)
    headers: dict[str, str] = {}
    if isinstance(exc, ValidationFailed):
        loc = list(exc.loc) if isinstance(exc, FieldError) else ["body", *exc.field.split(".")]
        return JSONResponse({"detail": [{"loc": loc, "msg": exc.message, "type": "value_error"}]}, 422)
    if isinstance(exc, NotAuthenticated):
        headers["www-authenticate"] = "Bearer"
    if isinstance(exc, TransientError | TooManyRequests) and exc.retry_after is not None:
        headers["retry-after"] = str(max(0, math.ceil(exc.retry_after)))
    detail = str(exc) if code != 500 else "internal error"
    return JSONResponse({"detail": detail}, code, headers=headers or None)


_SHOWN = ("type", "loc", "msg", "ctx")  # of a pydantic error: what was wrong and where, not the value


async def request_validation_handler(request: Request, exc: Exception) -> JSONResponse:
    """A body or parameter FastAPI refused: 422 naming each field, without echoing the value (which may be a
    secret: a tool's `secret` over its size limit was sent back whole)."""
    assert isinstance(exc, RequestValidationError)
    detail = [{key: error[key] for key in _SHOWN if key in error} for error in exc.errors()]
    return JSONResponse({"detail": jsonable_encoder(detail)}, 422)


async def database_unavailable_handler(request: Request, exc: Exception) -> JSONResponse:
    """The database did not answer: a 503 the client may retry (the details go to the log only). Nothing
    was half-written: every write is one transaction, rolled back when the connection failed."""
    log.error("database unavailable during %s %s: %s", request.method, request.url.path, exc)
    return JSONResponse({"detail": "the database is unavailable; retry later"}, 503,
                        headers={"retry-after": str(DATABASE_RETRY_AFTER)})


def install(app: FastAPI) -> None:
    """Register the handler for the whole tree on `app`, and the 503 for an unreachable database."""
    app.add_exception_handler(SleuthError, sleuth_error_handler)
    app.add_exception_handler(RequestValidationError, request_validation_handler)
    for error in database_unavailable_errors():
        app.add_exception_handler(error, database_unavailable_handler)
