"""``/v1/sources``: the tenant's knowledge sources — declare, list (with the last sync), sync now, remove (its
documents leave every engine), and FAQ candidates from solved tickets (docs/sources.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from api.auth import TenantDep
from api.deps import ServicesDep
from app import sources

router = APIRouter(prefix="/v1/sources", tags=["sources"])

_EXAMPLE = {
    "name": "help-center",
    "type": "zendesk-guide",
    "channel": "zd",
    "locale": "en-us",
    "every": "15m",
}


@router.post("", status_code=201, responses={422: {"description": "Unknown type, missing or wrong channel, "
                                                                   "bad interval, path or URL"}})
async def add_source(tenant: TenantDep, services: ServicesDep,
                     body: Annotated[dict[str, Any], Body(openapi_examples={"zendesk": {"value": _EXAMPLE}})],
                     ) -> dict[str, Any]:
    """Declare a source: ``type`` is zendesk-guide, freshdesk-solutions, zendesk-tickets, freshdesk-tickets
    (each with ``channel``: the tenant's helpdesk channel), folder (``path``) or sitemap (``url``); ``every``
    sets the interval (e.g. 15m); tickets take ``status`` and ``since``."""
    return await run_in_threadpool(sources.add_source, services, tenant=tenant, data=body)


@router.get("")
async def list_sources(tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """The tenant's sources with their last sync: items, added / updated / deleted / unchanged / skipped, last
    error, whether a sync is running."""
    return {"sources": await run_in_threadpool(sources.list_sources, services, tenant=tenant)}


@router.post("/{name}/sync", status_code=202, responses={404: {"description": "No such source"}})
async def sync_source(name: str, request: Request, tenant: TenantDep, services: ServicesDep,
                      full: Annotated[bool, Query(description="Read everything and remove what the source "
                                                              "no longer lists")] = False) -> dict[str, Any]:
    """Start a sync on the workers' ``sources`` queue (nothing happens while one is already running)."""
    source = await run_in_threadpool(sources.get_source, services, tenant=tenant, name=name)
    await run_in_threadpool(request.app.state.source_syncer, source.id, full)
    return {"source": name, "queued": True, "full": full}


@router.delete("/{name}", status_code=204, responses={404: {"description": "No such source"}})
async def remove_source(name: str, tenant: TenantDep, services: ServicesDep) -> Response:
    """Remove the source and every document it put in the engines."""
    await run_in_threadpool(sources.remove_source, services, tenant=tenant, name=name)
    return Response(status_code=204)


@router.get("/faq")
async def list_faq(tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """FAQ candidates grouped from solved tickets (pending until approved)."""
    return {"faq": await run_in_threadpool(sources.list_faq, services, tenant=tenant)}


@router.post("/faq/{faq_id}/approve", responses={404: {"description": "No such candidate"}})
async def approve_faq(faq_id: str, tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """Publish one candidate as a public document."""
    return await run_in_threadpool(sources.approve_faq, services, tenant=tenant, faq_id=faq_id)
