"""Signed webhook delivery, the Standard Webhooks way (https://www.standardwebhooks.com/).

Every request carries ``webhook-id`` (the delivery id: the same on every attempt, so receivers can
deduplicate), ``webhook-timestamp`` (unix seconds, fresh per attempt) and
``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`` keyed with the base64-decoded
part of the tenant secret ``whsec_<base64>``. ``Idempotency-Key`` repeats the webhook id.

Receivers verify with `verify(secret, headers, raw_body)` (or any Standard Webhooks library).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from datetime import UTC
from email.utils import parsedate_to_datetime

import httpx

from adapters.delivery.outbound import GuardedTransport, OutboundGuard
from investigation.errors import Forbidden, PermanentError, ReceiverRejected, ReceiverUnavailable
from investigation.ports import Delivered

SECRET_PREFIX = "whsec_"
SIGNATURE_VERSION = "v1"
USER_AGENT = "Sleuth-Webhooks/1"


class InvalidSignature(Forbidden):
    """Raised by `verify` when headers are missing, the timestamp is too old/new, or no signature matches."""


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret (the prefix is optional, as in the reference libraries)."""
    encoded = secret.removeprefix(SECRET_PREFIX)
    try:
        return base64.b64decode(encoded, validate=True)
    except ValueError as exc:
        raise PermanentError("webhook secret is not base64 after the whsec_ prefix") from exc


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value ``v1,<base64>`` for one message."""
    signed = b"%s.%d.%s" % (msg_id.encode(), int(timestamp), body)
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode()}"


def verify(secret: str, headers: Mapping[str, str], body: bytes, tolerance: int = 300,
           *, now: float | None = None) -> None:
    """Check a received webhook; raise `InvalidSignature` unless it is authentic and recent.

    `headers` may be any mapping (names are matched case-insensitively); `body` must be the raw bytes
    as received, before any JSON parsing. Timestamps more than `tolerance` seconds away from `now`
    (either way) are rejected, which stops replays. Any one of several space-separated signatures may
    match (senders list several while rotating secrets).
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    msg_id = lowered.get("webhook-id")
    stamp = lowered.get("webhook-timestamp")
    header = lowered.get("webhook-signature")
    if not msg_id or not stamp or not header:
        raise InvalidSignature("missing webhook-id, webhook-timestamp or webhook-signature header")
    try:
        timestamp = int(stamp)
    except ValueError as exc:
        raise InvalidSignature("webhook-timestamp is not an integer") from exc
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise InvalidSignature("webhook-timestamp is outside the tolerance window")
    expected = sign(secret, msg_id, timestamp, body).split(",", 1)[1]
    for candidate in header.split():
        version, _, value = candidate.partition(",")
        if version == SIGNATURE_VERSION and hmac.compare_digest(value, expected):
            return
    raise InvalidSignature("no matching signature")


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta-seconds or an HTTP date); None if unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def encode_body(payload: Mapping[str, object]) -> bytes:
    """The exact bytes sent and signed: compact UTF-8 JSON."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")


class WebhookDeliverer:
    """The ``webhook`` channel of the `Deliverer` port: one signed POST per call, errors classified.

    2xx → success; timeouts, connection errors, 5xx, 408 and 429 (with ``Retry-After``) →
    `ReceiverUnavailable` (a `TransientError`); any other status → `ReceiverRejected` (a `PermanentError`).
    Redirects are not followed: the signature is for the configured URL only.
    """

    channel = "webhook"

    def __init__(self, timeout: float, *, transport: httpx.BaseTransport | None = None,
                 clock: Callable[[], float] = time.time, guard: OutboundGuard | None = None) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.timeout = timeout
        self._clock = clock
        if guard is not None:  # every connection pinned to the address the tenant's policy allowed
            transport = GuardedTransport(guard, transport)
        self._client = httpx.Client(timeout=timeout, transport=transport, follow_redirects=False,
                                    headers={"user-agent": USER_AGENT})

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()

    def headers(self, *, delivery_id: str, body: bytes, secret: str) -> dict[str, str]:
        """The headers of one attempt (fresh timestamp and signature, same id)."""
        timestamp = int(self._clock())
        return {
            "content-type": "application/json",
            "webhook-id": delivery_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(secret, delivery_id, timestamp, body),
            "idempotency-key": delivery_id,
        }

    def deliver(self, *, delivery_id: str, target: dict[str, object], payload: dict[str, object],
                secret: str, resume: bool = False) -> Delivered:
        """POST `payload` to ``target["url"]`` once; a 2xx is delivered.

        `resume` (an earlier attempt's outcome is unknown) changes nothing here: the receiver
        deduplicates by ``webhook-id``."""
        url = target.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ReceiverRejected("webhook target has no http(s) url")
        body = encode_body(payload)
        headers = self.headers(delivery_id=delivery_id, body=body, secret=secret)
        try:
            response = self._client.post(url, content=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise ReceiverUnavailable(f"timed out after {self.timeout:g}s: {type(exc).__name__}") from exc
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ReceiverRejected(f"unusable webhook url: {exc}") from exc
        except httpx.TransportError as exc:
            raise ReceiverUnavailable(f"could not reach receiver: {type(exc).__name__}: {exc}") from exc
        code = response.status_code
        if 200 <= code < 300:
            return Delivered(code)
        reason = f"receiver answered {code} {response.reason_phrase}".strip()
        if code in (408, 429) or code >= 500:
            retry_after = parse_retry_after(response.headers.get("retry-after"), now=self._clock())
            raise ReceiverUnavailable(reason, status_code=code, retry_after=retry_after)
        raise ReceiverRejected(reason, status_code=code)


__all__ = [
    "InvalidSignature",
    "WebhookDeliverer",
    "encode_body",
    "parse_retry_after",
    "secret_key",
    "sign",
    "verify",
]
