"""Signed tokens for the operator pages: `sleuth trace` links and the sign-in form's CSRF token.

Tokens are ``base64url(json).base64url(hmac_sha256)`` under ``SLEUTH_SESSION_SECRET`` (or a random key
kept in SLEUTH_HOME/run/session.key, fine for one host). A link carries a nonce (it works once: see
`storage.console_sessions`), its scope (one investigation's trace, or the whole console) and the first
characters of the tenant's key hash, so rotating the API key voids the links made with the old one. The
session a link or the form opens lives server-side (`storage.console_sessions`); its cookie is only an id.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from config.settings import Settings
from storage import signing_key

COOKIE = "sleuth_session"
LOGIN_COOKIE = "sleuth_login"  # the sign-in form's pre-session CSRF nonce


@dataclass(frozen=True)
class Claims:
    """What a valid token says: whose it is, what for, until when."""

    tenant_id: str
    key_tag: str
    kind: str  # "link"
    expires: float
    investigation_id: str | None = None
    nonce: str | None = None  # a link works once: the nonce is consumed on first open
    scope: str | None = None  # "trace" (one investigation, read-only) | "console"


def secret_key(settings: Settings) -> bytes:
    """The links' signing key (`storage.signing_key`: the deliver task signs rating links with it too)."""
    return signing_key.secret_key(settings)


def key_tag(api_key_hash: str) -> str:
    return api_key_hash[:12]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(key: bytes, claims: Claims) -> str:
    body = _b64(json.dumps({"t": claims.tenant_id, "h": claims.key_tag, "k": claims.kind,
                            "e": int(claims.expires), "i": claims.investigation_id, "n": claims.nonce,
                            "s": claims.scope},
                           separators=(",", ":")).encode())
    mac = _b64(hmac.new(key, body.encode(), hashlib.sha256).digest())
    return f"{body}.{mac}"


def verify(key: bytes, token: str, *, kind: str, now: Callable[[], float] = time.time) -> Claims | None:
    """The claims of a genuine, unexpired token of `kind`; None otherwise (never raises)."""
    try:
        body, mac = token.split(".", 1)
        expected = _b64(hmac.new(key, body.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(mac, expected):
            return None
        data = json.loads(_unb64(body))
        claims = Claims(tenant_id=str(data["t"]), key_tag=str(data["h"]), kind=str(data["k"]),
                        expires=float(data["e"]), investigation_id=data.get("i"), nonce=data.get("n"),
                        scope=data.get("s"))
    except (ValueError, KeyError, TypeError):
        return None
    if claims.kind != kind or claims.expires < now():
        return None
    return claims


def link_token(settings: Settings, tenant_id: str, api_key_hash: str, investigation_id: str, *,
               console: bool = False, now: float | None = None) -> str:
    """A single-use link for one investigation's trace (read-only), or with `console` for the whole
    console; valid for ``settings.security.link_ttl_seconds``."""
    expires = (now or time.time()) + settings.security.link_ttl_seconds
    return sign(secret_key(settings),
                Claims(tenant_id, key_tag(api_key_hash), "link", expires, investigation_id,
                       nonce=secrets.token_urlsafe(16), scope="console" if console else "trace"))


def login_csrf(settings: Settings, nonce: str) -> str:
    """The sign-in form's hidden token for the nonce in its cookie: a cross-site page can neither read the
    cookie nor compute the token, so it cannot sign a victim into another tenant (login CSRF)."""
    return _b64(hmac.new(secret_key(settings), f"login:{nonce}".encode(), hashlib.sha256).digest())
