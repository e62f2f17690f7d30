"""``/v1/channels``: the tenant's delivery channels (secrets accepted as values, never returned)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response
from fastapi.concurrency import run_in_threadpool

from api.auth import TenantDep
from api.deps import ServicesDep
from app import channels

router = APIRouter(prefix="/v1/channels", tags=["channels"])

_EXAMPLE = {"name": "support-mail", "type": "smtp", "host": "smtp.acme.com", "port": 587, "starttls": True,
            "username": "sleuth", "password": "…", "from": "sleuth@acme.com"}


@router.post(
    "",
    status_code=201,
    responses={
        422: {"description": "Invalid field, duplicate name, or a host the tenant's outbound rules refuse"}
    },
)
async def add_channel(
    tenant: TenantDep,
    services: ServicesDep,
    body: Annotated[dict[str, Any], Body(openapi_examples={"smtp": {"value": _EXAMPLE}})],
) -> dict[str, Any]:
    """Add a channel: ``smtp`` (host, port, username, password, starttls | ssl, from), ``zendesk``
    (subdomain, email, token, signing_secret, base_url) or ``freshdesk`` (domain, api_key,
    inbound_secret, base_url). The answer masks every secret and gives helpdesks their ``inbound_url``."""
    return await run_in_threadpool(channels.add_channel, services, tenant=tenant, data=body)


@router.get("")
async def list_channels(tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """The tenant's channels, secrets masked."""
    return {"channels": await run_in_threadpool(channels.list_channels, services, tenant=tenant)}


@router.delete("/{name}", status_code=204, responses={404: {"description": "No such channel"}})
async def remove_channel(name: str, tenant: TenantDep, services: ServicesDep) -> Response:
    """Remove a channel; pending deliveries to it end dead."""
    await run_in_threadpool(channels.remove_channel, services, tenant=tenant, name=name)
    return Response(status_code=204)
