"""Signed rating links: one token per investigation and rater, valid 30 days, opening a page where a person
rates the answer without an API key (docs/feedback.md). The token names the investigation, its tenant and the
rater (the e-mail recipient, the ticket); it carries no key and reads nothing: the page shows the answer only
to a signed-in visitor. HMAC-SHA256 under the links' key (`storage.signing_key`), in a domain of its own, so a
rating token is never a valid console link and the other way round."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import quote

RATING_TTL_SECONDS = 30 * 24 * 3600
_DOMAIN = b"sleuth-rating:"


@dataclass(frozen=True)
class RatingClaims:
    tenant_id: str
    investigation_id: str
    rater: str
    expires: float


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _mac(key: bytes, body: str) -> str:
    return _b64(hmac.new(key, _DOMAIN + body.encode(), hashlib.sha256).digest())


def rating_token(
    key: bytes, *, tenant_id: str, investigation_id: str, rater: str, now: float | None = None
) -> str:
    expires = int((time.time() if now is None else now) + RATING_TTL_SECONDS)
    body = _b64(json.dumps({"t": tenant_id, "i": investigation_id, "r": rater[:200], "e": expires},
                           separators=(",", ":")).encode())
    return f"{body}.{_mac(key, body)}"


def verify_rating(key: bytes, token: str, *, now: float | None = None) -> RatingClaims | None:
    """The claims of a genuine, unexpired rating token; None otherwise (never raises)."""
    try:
        body, mac = token.split(".", 1)
        if not hmac.compare_digest(mac.encode(), _mac(key, body).encode()):
            return None
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        claims = RatingClaims(str(data["t"]), str(data["i"]), str(data["r"]), float(data["e"]))
    except (ValueError, KeyError, TypeError, UnicodeError):
        return None
    if claims.expires < (time.time() if now is None else now):
        return None
    return claims


def feedback_links(base_url: str, token: str) -> dict[str, str]:
    """The rating page and its three one-click variants: {"feedback_url", "helpful", "partly", "wrong"}."""
    url = f"{base_url.rstrip('/')}/r/{quote(token, safe='.')}"
    return {"feedback_url": url, **{r: f"{url}?rating={r}" for r in ("helpful", "partly", "wrong")}}
