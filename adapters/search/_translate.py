"""Client exceptions of the server-backed engines as errors of Sleuth's tree (TransientError is retried,
PermanentError fails fast): one function per client, imported lazily so neither SDK loads unless used."""

from __future__ import annotations

from typing import Any

from investigation.errors import PermanentError, SleuthError, TransientError

RETRY_STATUSES = (429, 502, 503, 504)  # Elasticsearch: retried by the client itself before we see an error
_RETRYABLE = ("unavailable", "deadline", "timeout", "timed out", "connection", "429", "too many", "try again")


def translate_elasticsearch(exc: Exception, action: str = "request") -> SleuthError:
    """An `elasticsearch`/`elastic_transport` exception as an error of Sleuth's tree."""
    from elasticsearch import ApiError, ConnectionError, SerializationError, SSLError, TransportError

    if isinstance(exc, ApiError):
        status = int(exc.meta.status)
        message = f"elasticsearch {action}: HTTP {status} {error_type(exc)}: {_error_reason(exc)}"
        if status in (408, 409) or status in RETRY_STATUSES or status >= 500:
            retry_after = exc.meta.headers.get("retry-after") if exc.meta.headers else None
            return TransientError(message, retry_after=_seconds(retry_after))
        return PermanentError(message)  # 400 bad request, 401/403 credentials, 404 no index: config/code
    if isinstance(exc, (SSLError, SerializationError)):
        return PermanentError(f"elasticsearch {action}: {type(exc).__name__}: {exc}")
    if isinstance(exc, (ConnectionError, TransportError)):  # refused, reset, timed out (after retries)
        return TransientError(f"elasticsearch {action}: {type(exc).__name__}: {exc}")
    return PermanentError(f"elasticsearch {action}: unexpected {type(exc).__name__}: {exc}")


def error_type(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("type", ""))
    return ""


def _error_reason(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("reason", ""))[:300]
    return str(getattr(exc, "message", exc))[:300]


def bulk_item_reason(error: Any, status: int) -> str:
    if isinstance(error, dict):
        return f"HTTP {status} {error.get('type', '')}: {error.get('reason', '')}"[:300]
    return f"HTTP {status} {error}"[:300]


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def translate_weaviate(exc: Exception, action: str = "request") -> SleuthError:
    """A `weaviate` client exception as an error of Sleuth's tree."""
    from weaviate.exceptions import (
        UnexpectedStatusCodeError,
        WeaviateBaseError,
        WeaviateClosedClientError,
        WeaviateConnectionError,
        WeaviateGRPCUnavailableError,
        WeaviateInvalidInputError,
        WeaviateQueryError,
        WeaviateStartUpError,
        WeaviateTimeoutError,
    )

    message = f"weaviate {action}: {type(exc).__name__}: {getattr(exc, 'message', None) or exc}"[:500]
    if isinstance(exc, UnexpectedStatusCodeError):
        code = exc.status_code
        # REST answers carry HTTP codes; gRPC ones carry gRPC codes (14 UNAVAILABLE, 4 DEADLINE_EXCEEDED, 8
        # RESOURCE_EXHAUSTED); the client uses the same attribute for both.
        if code in (408, 429) or code >= 500 or code in (4, 8, 14):
            return TransientError(message)
        return PermanentError(message)
    if isinstance(exc, (WeaviateConnectionError, WeaviateStartUpError, WeaviateGRPCUnavailableError,
                        WeaviateTimeoutError, WeaviateClosedClientError, ConnectionError, TimeoutError)):
        return TransientError(message)
    if isinstance(exc, WeaviateInvalidInputError):
        return PermanentError(message)
    if isinstance(exc, WeaviateQueryError):  # a gRPC failure, reported by message only
        return TransientError(message) if retryable_message(str(exc.message)) else PermanentError(message)
    if isinstance(exc, WeaviateBaseError):
        return PermanentError(message)
    return PermanentError(f"weaviate {action}: unexpected {type(exc).__name__}: {exc}"[:500])


def retryable_message(message: str) -> bool:
    lowered = message.lower()
    return any(word in lowered for word in _RETRYABLE)
