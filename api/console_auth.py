"""Who is looking at an operator page, and may they post this form.

A visitor is the tenant of a live server-side session (cookie → `storage.console_sessions`) or of a Bearer
key (scripts). A session ends when it expires, on sign-out, or when the tenant's API key is rotated; a
session opened by a `sleuth trace` link sees one investigation's trace only, read-only. Every
state-changing form checks the origin (Sec-Fetch-Site / Origin against Host) and a CSRF token: the
session's own, or for the sign-in form a token bound to a pre-session cookie.
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs

import redis
from fastapi import Request, Response

from api import session, throttle
from api.deps import get_services
from investigation.errors import Forbidden, NotFound, SleuthError, TransientError
from storage import repositories as repo
from storage.console_sessions import SCOPE_CONSOLE, ConsoleSession, ConsoleSessions
from storage.models import Tenant

MAX_FORM_BYTES = 4096
CSRF_FIELD = "csrf"
_NONCE = re.compile(r"[A-Za-z0-9_-]{20,64}")


@dataclass(frozen=True)
class Visitor:
    """A signed-in visitor: `session` is None for a Bearer key (a full credential no browser sends on its
    own, so no CSRF token is needed)."""

    tenant: Tenant
    session: ConsoleSession | None = None

    @property
    def full(self) -> bool:
        """May open the list page and act (Redeliver)."""
        return self.session is None or self.session.full

    def may_open(self, investigation_id: str) -> bool:
        return self.session is None or self.session.may_open(investigation_id)


def store(request: Request) -> ConsoleSessions:
    services = get_services(request)
    try:
        return ConsoleSessions(services.redis, services.settings.redis_prefix)
    except SleuthError as exc:
        raise TransientError(f"the session store is unavailable: {exc}") from exc


def _detached(tenant: Tenant) -> Tenant:
    return Tenant.model_validate(tenant.model_dump())


def _bearer(request: Request, api_key: str) -> Visitor | None:
    throttle.check(request)
    with get_services(request).session() as db:
        try:
            return Visitor(repo.authenticate(db, api_key=api_key))  # detached
        except Forbidden:
            throttle.failed(request)
            return None


def visitor(request: Request) -> Visitor | None:
    """The visitor of the request's Bearer key or session cookie; None when neither is valid."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return _bearer(request, header[7:].strip())
    session_id = request.cookies.get(session.COOKIE)
    if not session_id:
        return None
    sessions = store(request)
    try:
        record = sessions.get(session_id)
    except redis.RedisError as exc:
        raise TransientError(f"the session store is unavailable: {exc}") from exc
    if record is None:
        return None
    with get_services(request).session() as db:
        try:
            tenant = _detached(repo.get_tenant(db, tenant_id=record.tenant_id))
        except NotFound:
            return None
    if session.key_tag(tenant.api_key_hash) != record.key_tag:
        sessions.end(session_id)  # the key was rotated after this session was made
        return None
    return Visitor(tenant, record)


def session_tenant(request: Request, investigation_id: str | None = None) -> Tenant | None:
    """The visitor's tenant when it may see `investigation_id` (or, with None, the whole console)."""
    found = visitor(request)
    if found is None:
        return None
    allowed = found.may_open(investigation_id) if investigation_id is not None else found.full
    return found.tenant if allowed else None


def _secure(request: Request) -> bool:
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "") == "https"


def start_session(request: Request, response: Response, tenant: Tenant, *, scope: str = SCOPE_CONSOLE,
                  investigation_id: str | None = None, ttl_seconds: int | None = None) -> None:
    """A new server-side session, its id in a cookie: HttpOnly (no script reads it), SameSite=Lax (no
    cross-site POST carries it), Secure behind HTTPS, for the session's lifetime."""
    settings = get_services(request).settings
    ttl = ttl_seconds or settings.security.session_ttl_seconds
    old = request.cookies.get(session.COOKIE)
    sessions = store(request)
    if old:
        sessions.end(old)
    session_id, _ = sessions.create(tenant_id=tenant.id, key_tag=session.key_tag(tenant.api_key_hash),
                                    scope=scope, ttl_seconds=ttl, investigation_id=investigation_id)
    response.set_cookie(session.COOKIE, session_id, max_age=ttl, httponly=True, samesite="lax",
                        secure=_secure(request), path="/")


def end_session(request: Request, response: Response) -> None:
    """Sign out: the session is deleted server-side (an old copy of the cookie no longer works)."""
    session_id = request.cookies.get(session.COOKIE)
    if session_id:
        store(request).end(session_id)
    response.delete_cookie(session.COOKIE, path="/", httponly=True, samesite="lax")


def same_origin(request: Request) -> bool:
    """A form post from this site. Browsers say so in Sec-Fetch-Site; else the Origin must match the
    Host (pages send no Referer, so a browser's Origin may be "null": refused). No header at all (curl,
    scripts) passes this check; the CSRF token is still required."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin.split("://", 1)[-1].split("/", 1)[0] == request.headers.get("host", "")


async def read_form(request: Request) -> dict[str, str]:
    """The first value of each field of a small urlencoded form (anything past the cap is ignored)."""
    raw = await request.body()
    return {k: v[0] for k, v in parse_qs(raw[:MAX_FORM_BYTES].decode("utf-8", "replace")).items()}


def csrf_ok(request: Request, found: Visitor, token: str | None) -> bool:
    """The reusable check of every state-changing console form: same origin, and the session's token."""
    if not same_origin(request):
        return False
    if found.session is None:
        return True
    return bool(token) and hmac.compare_digest(str(token), found.session.csrf)


def login_nonce(request: Request) -> str:
    """The sign-in form's pre-session nonce: the browser's own when it has one, else a new one."""
    nonce = request.cookies.get(session.LOGIN_COOKIE, "")
    return nonce if _NONCE.fullmatch(nonce) else secrets.token_urlsafe(24)


def set_login_cookie(request: Request, response: Response, nonce: str) -> None:
    """The nonce's cookie: HttpOnly, SameSite=Strict, only sent to /login."""
    response.set_cookie(session.LOGIN_COOKIE, nonce, max_age=3600, httponly=True, samesite="strict",
                        secure=_secure(request), path="/login")


def login_csrf_ok(request: Request, token: str | None) -> bool:
    """A sign-in post from this site's own form: same origin, and the token matching the nonce cookie."""
    nonce = request.cookies.get(session.LOGIN_COOKIE, "")
    if not same_origin(request) or not token or not _NONCE.fullmatch(nonce):
        return False
    expected = session.login_csrf(get_services(request).settings, nonce)
    return hmac.compare_digest(str(token), expected)


def safe_next(path: str | None) -> str:
    """A local path to go back to after signing in (never another site)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/investigations"
    return path
