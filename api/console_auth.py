"""Who is looking at an operator page: the tenant of a valid session cookie (or of a Bearer key, for
scripts). A cookie stops working when it expires or when the tenant's API key is rotated."""

from __future__ import annotations

from fastapi import Request, Response

from api import session
from api.deps import get_services
from investigation.errors import Forbidden, NotFound
from storage import repositories as repo
from storage.models import Tenant


def _detached(tenant: Tenant) -> Tenant:
    return Tenant.model_validate(tenant.model_dump())


def session_tenant(request: Request) -> Tenant | None:
    """The tenant of the request's session cookie or Bearer key; None when neither is valid."""
    services = get_services(request)
    header = request.headers.get("authorization", "")
    with services.session() as db:
        if header.lower().startswith("bearer "):
            try:
                return repo.authenticate(db, api_key=header[7:].strip())  # detached
            except Forbidden:
                return None
        token = request.cookies.get(session.COOKIE)
        if not token:
            return None
        claims = session.verify(session.secret_key(services.settings), token, kind="session")
        if claims is None:
            return None
        try:
            tenant = repo.get_tenant(db, tenant_id=claims.tenant_id)
        except NotFound:
            return None
        if session.key_tag(tenant.api_key_hash) != claims.key_tag:
            return None  # the key was rotated after this session was made
        return _detached(tenant)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "") == "https"


def start_session(request: Request, response: Response, tenant: Tenant) -> None:
    """Set the session cookie: HttpOnly (no script reads it), SameSite=Lax (no cross-site POST carries
    it), Secure behind HTTPS, for the session lifetime."""
    settings = get_services(request).settings
    token = session.session_token(settings, tenant.id, tenant.api_key_hash)
    response.set_cookie(session.COOKIE, token, max_age=settings.session_ttl_seconds, httponly=True,
                        samesite="lax", secure=_secure(request), path="/")


def end_session(response: Response) -> None:
    response.delete_cookie(session.COOKIE, path="/", httponly=True, samesite="lax")


def same_origin(request: Request) -> bool:
    """A form post from this site. Browsers say so in Sec-Fetch-Site; else the Origin must match the
    Host (pages send no Referer, so a browser's Origin may be "null": refused). No header at all (curl,
    scripts with the cookie) is allowed: a browser always sends one of them on a POST."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin.split("://", 1)[-1].split("/", 1)[0] == request.headers.get("host", "")


def safe_next(path: str | None) -> str:
    """A local path to go back to after signing in (never another site)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/investigations"
    return path
