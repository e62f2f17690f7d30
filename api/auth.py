"""Per-tenant API keys: ``Authorization: Bearer <key>`` → `Tenant` (``?key=`` too, for browser pages)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api import throttle
from api.console_auth import session_tenant
from api.deps import get_services
from api.errors import NotAuthenticated
from api.session import COOKIE
from investigation.errors import Forbidden
from storage import repositories as repo
from storage.models import Tenant

_bearer = HTTPBearer(auto_error=False, description="The tenant's API key.")


def _authenticate(request: Request, api_key: str | None) -> Tenant:
    if not api_key:
        raise NotAuthenticated("missing API key (Authorization: Bearer <key>)")
    throttle.check(request)  # 429 once this address has sent too many bad keys, before the key is looked at
    services = get_services(request)
    with services.session() as session:
        try:
            return repo.authenticate(session, api_key=api_key)  # detached: read after the session is gone
        except Forbidden as exc:
            throttle.failed(request)
            raise NotAuthenticated("invalid API key") from exc


async def bearer_tenant(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Tenant:
    """The tenant of the Bearer key; 401 when missing or unknown."""
    key = credentials.credentials if credentials is not None else None
    return await run_in_threadpool(_authenticate, request, key)


async def page_tenant(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    key: Annotated[str | None, Query(description="API key, for browsers (EventSource, links).")] = None,
) -> Tenant:
    """Like `bearer_tenant`, but also accepts the operator pages' session cookie (an EventSource cannot
    set headers) and, for old scripts, ``?key=``. Prefer the header or the cookie: URLs end up in logs.
    A session opened by a link reaches only its own investigation's routes."""
    api_key = credentials.credentials if credentials is not None else key
    if api_key is None and request.cookies.get(COOKIE):
        # The trace page's EventSource: same-origin, authenticated by the session cookie.
        investigation_id = request.path_params.get("investigation_id")
        tenant = await run_in_threadpool(session_tenant, request, investigation_id)
        if tenant is not None:
            return tenant
    return await run_in_threadpool(_authenticate, request, api_key)


TenantDep = Annotated[Tenant, Depends(bearer_tenant)]
PageTenantDep = Annotated[Tenant, Depends(page_tenant)]
