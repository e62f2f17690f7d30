"""The reader of a stored source: its helpdesk channel's base URL and decrypted credentials, the tenant's
outbound guard, or its folder / sitemap URL (docs/sources.md)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx

from adapters.sources import freshdesk_solutions, zendesk_guide
from adapters.sources.base import CHANNEL_OF_TYPE, Reader, SourceRejected
from adapters.sources.folder import FolderReader
from adapters.sources.http import SourceClient
from adapters.sources.sitemap import SitemapReader
from adapters.sources.tickets import FreshdeskTicketsReader, ZendeskTicketsReader
from app.callbacks import guard_for
from bootstrap import Services
from investigation.errors import NotFound
from storage import _sources as sources_repo
from storage import repositories as repo
from storage.secrets import SecretBox
from storage.source_models import Source


def open_reader(services: Services, source: Source, *, transport: httpx.BaseTransport | None = None,
                sleep: Callable[[float], None] = time.sleep) -> Reader:
    """The `Reader` for `source`; SourceRejected naming the source when its channel is gone or unusable."""
    if source.type == "folder":
        return FolderReader(Path(str(source.config["path"])), source=source.name)
    with services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=source.tenant_id)
        if source.type == "sitemap":
            return SitemapReader(str(source.config["url"]), guard=guard_for(tenant, services.settings),
                                 source=source.name, timeout=services.settings.delivery.webhook_timeout,
                                 transport=transport, sleep=sleep)
        try:
            channel = repo.get_channel(
                session, channel_id=source.channel_id or "", tenant_id=source.tenant_id
            )
        except NotFound:
            raise SourceRejected(
                f"source {source.name!r}: its channel was removed; add the channel again "
                "(`sleuth channels add`) and re-create the source"
            ) from None
        config, sealed = dict(channel.config), channel.secrets
    secrets = SecretBox.from_settings(services.settings).open(sealed) if sealed else {}
    product = CHANNEL_OF_TYPE[source.type]
    if product == "zendesk":
        auth = (f"{config['email']}/token", secrets.get("token", ""))
        fix = zendesk_guide.FIX
    else:
        auth = (secrets.get("api_key", ""), "X")
        fix = freshdesk_solutions.FIX
    if not auth[0] or not auth[1]:
        raise SourceRejected(f"source {source.name!r}: the {product} channel has no API credentials; {fix}")
    client = SourceClient(
        source=source.name,
        product=product.capitalize(),
        base_url=str(config["base_url"]),
        auth=auth,
        guard=guard_for(tenant, services.settings),
        timeout=services.settings.delivery.webhook_timeout,
        fix=fix,
        transport=transport,
        sleep=sleep,
    )
    if source.type == "zendesk-guide":
        return zendesk_guide.ZendeskGuideReader(client, locale=source.config.get("locale"))
    if source.type == "freshdesk-solutions":
        return freshdesk_solutions.FreshdeskSolutionsReader(client)
    status = tuple(source.config.get("status") or ("solved",))
    since = int(source.config.get("since_seconds") or 0)
    if source.type == "zendesk-tickets":
        return ZendeskTicketsReader(client, statuses=status, since_seconds=since)
    return FreshdeskTicketsReader(client, statuses=status, since_seconds=since)


def source_row(services: Services, source_id: str) -> Source:
    with services.session() as session:
        return sources_repo.get_source(session, source_id=source_id)
