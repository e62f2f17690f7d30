"""Shared set-up of the channel delivery tests: a tenant allowed to reach 127.0.0.1, its channels, and a
finished investigation whose callback points at them."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from adapters.delivery.channels import parse_channel, split
from bootstrap import Services
from config.settings import Settings
from storage import repositories as repo
from storage.models import Tenant
from storage.secrets import SecretBox

CITATIONS = [{"marker": 1, "evidence_id": "e1", "source_id": "frankfurt", "title": "Frankfurt region"},
             {"marker": 2, "evidence_id": "e2", "source_id": "plans", "title": "Plans and pricing"}]


def make_services(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str, **extra: Any) -> Services:
    knobs: dict[str, Any] = {"webhook_backoff_base": 0.01, "webhook_backoff_max": 0.05,
                             "webhook_max_attempts": 3, "webhook_timeout": 2.0,
                             "webhook_allow_private": False, "smtp_timeout": 5.0}
    knobs.update(extra)
    return Services(Settings(home=tmp_path / "home", database_url=db_url, redis_url=redis_url,
                             redis_prefix=redis_prefix, **knobs))


def new_tenant(services: Services, allowed: list[str] | None = None) -> Tenant:
    with services.session() as session:
        tenant, _ = repo.create_tenant(session, name=f"t-{uuid.uuid4().hex[:10]}", box=services.secret_box(),
                                       allowed_hosts=["127.0.0.1"] if allowed is None else allowed)
        return tenant


def add_channel(services: Services, tenant: Tenant, **fields: Any) -> str:
    config, secrets = split(parse_channel(fields))
    with services.session() as session:
        channel = repo.create_channel(
            session,
            tenant_id=tenant.id,
            name=fields["name"],
            type=fields["type"],
            config=config,
            secrets=secrets,
            box=SecretBox.from_settings(services.settings),
        )
        return channel.id


def finished(
    services: Services,
    tenant: Tenant,
    callback: Any,
    *,
    status: str = "answered",
    answer: str | None = "Data stays in Germany with the Frankfurt region [1], on the Business plan [2].",
    caveat: str | None = None,
) -> tuple[str, list[str]]:
    """(investigation id, delivery ids) of an investigation finished with `status`."""
    with services.session() as session:
        inv, _ = repo.create_investigation(
            session, tenant=tenant, question="Which region keeps our data in Germany?", mode="agentic",
            callback=callback, budget={}, idempotency_key=None, deadline_seconds=60)
        repo.finish_investigation(session, investigation_id=inv.id, status=status, stop_reason="sufficient",
                                  answer=answer if status == "answered" else None, caveat=caveat,
                                  citations=CITATIONS if status == "answered" else [])
        return inv.id, [d.id for d in repo.list_deliveries(session, investigation_id=inv.id)]


def attempts(services: Services, delivery_id: str) -> list[Any]:
    with services.session() as session:
        return repo.list_attempts(session, delivery_id=delivery_id)


def delivery(services: Services, delivery_id: str) -> Any:
    with services.session() as session:
        return repo.get_delivery(session, delivery_id=delivery_id)
