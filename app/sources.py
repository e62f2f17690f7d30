"""Managing a tenant's knowledge sources — the same rules for the CLI and the API: add (validated, its channel
checked), list (with the last sync's figures), remove (its documents leave every engine), FAQ candidates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from adapters.search.ingest import SourceDocument
from adapters.sources.base import CHANNEL_OF_TYPE, SOURCE_TYPES
from app.callbacks import check_endpoint, guard_for
from app.corpus import ingest_documents, remove_documents
from bootstrap import Services
from investigation.errors import NotFound, ValidationFailed
from investigation.sources.faq import Resolved, group
from investigation.sources.plan import document_id
from investigation.sources.schedule import parse_duration, parse_every
from investigation.state import Visibility
from storage import _sources as sources_repo
from storage import repositories as repo
from storage.models import Tenant
from storage.source_models import FaqCandidate, Source

TICKET_STATUSES = {"zendesk-tickets": ("solved", "closed"), "freshdesk-tickets": ("resolved", "closed")}


class SourceSpec(BaseModel):
    """A source as declared (CLI flags or the API's JSON body)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")
    type: str
    channel: str | None = None
    locale: str | None = Field(default=None, max_length=20, pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
    every: str = "15m"
    status: list[str] | None = None
    since: str | None = None
    path: str | None = None
    url: str | None = Field(default=None, max_length=2000)


def parse_spec(data: dict[str, Any]) -> SourceSpec:
    try:
        return SourceSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise ValidationFailed(".".join(str(p) for p in first["loc"]) or "source", first["msg"]) from None


def add_source(services: Services, *, tenant: Tenant, data: dict[str, Any]) -> dict[str, Any]:
    """Validate and store a source; ValidationFailed names the field to fix."""
    spec = parse_spec(data)
    if spec.type not in SOURCE_TYPES:
        raise ValidationFailed("type", f"unknown source type {spec.type!r}; one of {', '.join(SOURCE_TYPES)}")
    every = parse_every(spec.every)
    config: dict[str, Any] = {}
    channel_id: str | None = None
    if spec.type in CHANNEL_OF_TYPE:
        channel_id = _channel(services, tenant, spec)
    if spec.type == "zendesk-guide" and spec.locale:
        config["locale"] = spec.locale.lower()
    if spec.type in TICKET_STATUSES:
        allowed = TICKET_STATUSES[spec.type]
        status = [s.lower() for s in spec.status or [allowed[0]]]
        if bad := [s for s in status if s not in allowed]:
            raise ValidationFailed("status", f"{bad[0]!r}: a {spec.type} source takes {' or '.join(allowed)}")
        config["status"] = status
        config["since_seconds"] = parse_duration(spec.since or "90d", field="since")
    if spec.type == "folder":
        if not spec.path:
            raise ValidationFailed("path", "a folder source needs --path DIR")
        path = Path(spec.path).expanduser().resolve()
        if not path.is_dir():
            raise ValidationFailed("path", f"{spec.path} is not a folder")
        config["path"] = str(path)
    if spec.type == "sitemap":
        if not spec.url:
            raise ValidationFailed("url", "a sitemap source needs --url https://…/sitemap.xml")
        check_endpoint(guard_for(tenant, services.settings), "sitemap", {"base_url": spec.url}, field="url")
        config["url"] = spec.url
    with services.session() as session:
        source = sources_repo.create_source(session, tenant_id=tenant.id, name=spec.name, type=spec.type,
                                            channel_id=channel_id, config=config, every_seconds=every)
    return view(source)


def _channel(services: Services, tenant: Tenant, spec: SourceSpec) -> str:
    expected = CHANNEL_OF_TYPE[spec.type]
    if not spec.channel:
        raise ValidationFailed("channel", f"a {spec.type} source needs --channel NAME (a {expected} channel)")
    with services.session() as session:
        try:
            channel = repo.get_channel(session, tenant_id=tenant.id, name=spec.channel)
        except NotFound:
            raise ValidationFailed(
                "channel", f"no channel named {spec.channel!r} (see `sleuth channels list`)"
            ) from None
    if channel.type != expected:
        raise ValidationFailed(
            "channel",
            f"{spec.channel!r} is a {channel.type} channel; a {spec.type} source needs a {expected} channel",
        )
    return channel.id


def view(source: Source) -> dict[str, Any]:
    """The public view of a source and its last sync."""
    def when(value: Any) -> str | None:
        return value.isoformat() + "Z" if value is not None else None

    return {"id": source.id, "name": source.name, "type": source.type, "every_seconds": source.every_seconds,
            "config": dict(source.config), "items": source.items, "running": source.run_id is not None,
            "last_started_at": when(source.last_started_at), "last_success_at": when(source.last_success_at),
            "last_finished_at": when(source.last_finished_at), "last_stats": dict(source.last_stats),
            "last_error": source.last_error, "failures": source.failures}


def get_source(services: Services, *, tenant: Tenant, name: str) -> Source:
    with services.session() as session:
        return sources_repo.get_source(session, tenant_id=tenant.id, name=name)


def list_sources(services: Services, *, tenant: Tenant) -> list[dict[str, Any]]:
    with services.session() as session:
        return [view(s) for s in sources_repo.list_sources(session, tenant_id=tenant.id)]


def remove_source(services: Services, *, tenant: Tenant, name: str) -> int:
    """Delete the source and every document it put in the engines (and its published FAQs); the number of
    documents removed."""
    source = get_source(services, tenant=tenant, name=name)
    with services.session() as session:
        items = sources_repo.known_items(session, source_id=source.id)
        faqs = [f for f in sources_repo.list_faq(session, tenant_id=tenant.id) if f.source_id == source.id]
    ids = [document_id(source.id, i.external_id, i.version) for i in items]
    ids += [faq_document_id(f) for f in faqs if f.status == "approved"]
    if ids:
        remove_documents(services, ids, tenant_id=tenant.id)
    with services.session() as session:
        sources_repo.delete_source(session, source_id=source.id)
    return len(ids)


def faq_document_id(faq: FaqCandidate) -> str:
    return f"{faq.source_id}:faq:{faq.key}"


def refresh_faq(services: Services, source: Source) -> int:
    """Group the source's solved tickets into FAQ candidates (pending until approved); how many there are."""
    with services.session() as session:
        items = sources_repo.known_items(session, source_id=source.id)
    resolved = [
        Resolved(
            i.external_id, str(i.summary.get("question") or ""), str(i.summary.get("resolution") or ""), i.url
        )
        for i in items
        if i.summary.get("question")
    ]
    candidates = group(resolved)
    with services.session() as session:
        for c in candidates:
            sources_repo.upsert_faq(session, tenant_id=source.tenant_id, source_id=source.id, key=c.key,
                                    question=c.question, answer=c.answer, ticket_ids=c.ticket_ids)
    return len(candidates)


def faq_view(faq: FaqCandidate) -> dict[str, Any]:
    return {"id": faq.id, "source_id": faq.source_id, "status": faq.status, "question": faq.question,
            "answer": faq.answer, "tickets": len(faq.ticket_ids)}


def list_faq(services: Services, *, tenant: Tenant) -> list[dict[str, Any]]:
    with services.session() as session:
        return [faq_view(f) for f in sources_repo.list_faq(session, tenant_id=tenant.id)]


def approve_faq(services: Services, *, tenant: Tenant, faq_id: str) -> dict[str, Any]:
    """Publish one candidate as a public document (the only way ticket knowledge reaches customers)."""
    with services.session() as session:
        faq = sources_repo.approve_faq(session, tenant_id=tenant.id, faq_id=faq_id)
    doc = SourceDocument(id=faq_document_id(faq), title=faq.question, text=faq.answer,
                         visibility=Visibility.PUBLIC)
    ingest_documents(services, [doc], tenant_id=tenant.id)
    return faq_view(faq)
