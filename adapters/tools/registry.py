"""Declaring tools, the one way for the CLI and the API: read a YAML/JSON file (or an OpenAPI operation),
validate it, refuse private/loopback targets the tenant has not allowlisted, seal the secret, store it.
Also what the loop reads back: a tenant's declarations and, inside the tool task only, one secret.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from sqlmodel import Session

from adapters.tools.outbound import guard_for
from config.settings import Settings
from investigation.errors import SleuthError, ValidationFailed
from investigation.tools.declaration import ToolDeclaration, declaration_json, parse_declaration
from investigation.tools.openapi import import_operation
from investigation.tools.templates import VARIABLE
from storage import repositories as repo
from storage.models import Tenant, ToolRecord
from storage.tool_secrets import open_secret, seal_secret


def read_file(path: Path, *, operation: str | None = None) -> list[dict[str, Any]]:
    """Declarations in a YAML/JSON file: one object, a list, or ``{"tools": [...]}``; with `operation`,
    the file is an OpenAPI document and that operation is imported."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationFailed("file", f"cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ValidationFailed("file", f"{path.name} is not valid YAML/JSON: {exc}") from None
    if operation is not None:
        if not isinstance(data, Mapping):
            raise ValidationFailed("file", "an OpenAPI document is an object")
        return [import_operation(data, operation)]
    if isinstance(data, Mapping) and "tools" in data:
        data = data["tools"]
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(item, Mapping) for item in items):
        raise ValidationFailed(
            "file", "expected a tool declaration object, a list of them, or {tools: [...]}"
        )
    return [dict(item) for item in items]


def allowed_hosts(tenant: Tenant) -> list[str]:
    return list(tenant.allowed_hosts or [])


def check_target(decl: ToolDeclaration, tenant: Tenant, settings: Settings) -> None:
    """Refuse a URL on a private/loopback address unless the tenant's allowlist names its host."""
    guard = guard_for(allowed_hosts(tenant), allow_private=settings.security.tools_allow_private)
    try:
        guard.check_url(VARIABLE.sub("x", decl.url))
    except SleuthError as exc:
        raise ValidationFailed("url", str(exc)) from None


def register(session: Session, settings: Settings, *, tenant: Tenant, raw: Mapping[str, Any],
             secret: str | None) -> tuple[ToolRecord, bool]:
    """Validate and store one declaration (replacing a tool of the same name); (record, created)."""
    decl = parse_declaration(raw)
    check_target(decl, tenant, settings)
    if secret is not None and not secret.strip():
        raise ValidationFailed("secret", "must not be blank")
    if decl.auth.type == "none" and secret:
        raise ValidationFailed("secret", "the declaration's auth type is `none`: no secret is sent")
    existing = {t.name: t for t in repo.list_tools(session, tenant_id=tenant.id)}
    has_secret = bool(secret) or bool(existing.get(decl.name) and existing[decl.name].secret)
    if decl.auth.type != "none" and not has_secret:
        raise ValidationFailed("secret", f"auth type `{decl.auth.type}` needs a secret "
                                         "(--secret-env VAR or --secret-file FILE)")
    sealed = seal_secret(settings, secret) if secret else None
    return repo.put_tool(session, tenant_id=tenant.id, name=decl.name, declaration=declaration_json(decl),
                         sealed_secret=sealed)


def tool_view(record: ToolRecord) -> dict[str, Any]:
    """The public form of a stored tool: its declaration and whether a secret is set (never the secret)."""
    return {"name": record.name, "declaration": record.declaration, "has_secret": bool(record.secret),
            "revision": record.revision[:12], "created_at": record.created_at.isoformat() + "Z",
            "updated_at": record.updated_at.isoformat() + "Z"}


@dataclass(frozen=True)
class StoredTool:
    """A declaration as the loop uses it (the sealed secret stays sealed until the tool task)."""

    declaration: ToolDeclaration
    revision: str
    sealed_secret: str


def load_tools(session: Session, *, tenant_id: str) -> list[StoredTool]:
    return [StoredTool(parse_declaration(r.declaration), r.revision, r.secret)
            for r in repo.list_tools(session, tenant_id=tenant_id)]


def unseal(settings: Settings, tool: StoredTool) -> str | None:
    return open_secret(settings, tool.sealed_secret)


def by_name(tools: Sequence[StoredTool]) -> dict[str, StoredTool]:
    return {t.declaration.name: t for t in tools}
