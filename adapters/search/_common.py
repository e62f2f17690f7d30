"""Helpers every search adapter shares: input checks, ACL principals, timestamps, item-failure reports."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from investigation.errors import PermanentError, TransientError, ValidationFailed

PUBLIC = "__public__"  # acl value of a chunk anyone in the tenant may see

__all__ = ["PUBLIC", "ItemFailure", "check_query", "check_tenant", "raise_for_failures", "timestamp",
           "visible_to"]

log = logging.getLogger("sleuth.search")
SHOWN_FAILURES = 5  # failures spelled out in an error message; every one is logged


@dataclass(frozen=True)
class ItemFailure:
    """One chunk a bulk/batch write did not store, with the engine's own reason."""

    chunk_id: str
    reason: str
    retryable: bool


def check_tenant(tenant: str) -> None:
    if not tenant or not tenant.strip():
        raise ValidationFailed("tenant", "must not be empty")


def check_query(query: str) -> None:
    if not query or not query.strip():
        raise ValidationFailed("query", "must not be empty")


def visible_to(acl: Sequence[str]) -> list[str]:
    """ACL values a caller with principals `acl` may see: public chunks plus shared principals."""
    return [PUBLIC, *dict.fromkeys(acl)]


def timestamp(value: str | None) -> str | None:
    """An ISO-8601 date/time as RFC 3339 UTC, or None when absent or unreadable (both engines reject a
    malformed date for the whole item, and one odd `updated_at` must not cost a chunk)."""
    if not value or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        log.warning("ignoring unreadable updated_at %r", value)
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z")


def raise_for_failures(engine: str, failures: Sequence[ItemFailure], total: int) -> None:
    """Report every chunk a write did not store: each is logged, and the call fails naming them.

    TransientError when every failure may pass on a retry (rejections, timeouts), else PermanentError;
    the chunks that were stored stay stored, and a re-run is idempotent.
    """
    if not failures:
        return
    for failure in failures:
        log.error("%s did not store chunk %s: %s", engine, failure.chunk_id, failure.reason)
    shown = "; ".join(f"{f.chunk_id}: {f.reason}" for f in failures[:SHOWN_FAILURES])
    more = f" (+{len(failures) - SHOWN_FAILURES} more)" if len(failures) > SHOWN_FAILURES else ""
    message = f"{engine}: {len(failures)} of {total} chunks were not stored: {shown}{more}"
    if all(f.retryable for f in failures):
        raise TransientError(message)
    raise PermanentError(message)
