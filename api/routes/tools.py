"""`/v1/tools`: a tenant declares, lists and removes the HTTP tools its investigations may call."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from adapters.tools.registry import register, tool_view
from api.auth import TenantDep
from api.deps import ServicesDep
from investigation.errors import ValidationFailed
from storage import repositories as repo

router = APIRouter(tags=["tools"])


class ToolCreate(BaseModel):
    """The body of ``POST /v1/tools``: one declaration (see docs/tools.md) and, when its auth needs one,
    the secret (stored encrypted, never returned)."""

    model_config = ConfigDict(extra="forbid")

    declaration: dict[str, Any]
    secret: str | None = Field(default=None, max_length=4096)


class ToolPublic(BaseModel):
    name: str
    declaration: dict[str, Any]
    has_secret: bool
    revision: str
    created_at: str
    updated_at: str


class ToolList(BaseModel):
    tools: list[ToolPublic]


@router.post(
    "/v1/tools",
    status_code=201,
    response_model=ToolPublic,
    responses={
        200: {"description": "An existing tool of that name was replaced"},
        422: {"description": "Invalid declaration (the field is named), or a private target"},
    },
)
def create_tool(
    body: ToolCreate, tenant: TenantDep, services: ServicesDep, response: Response
) -> dict[str, Any]:
    """Validate and store a tool declaration; a tool of the same name is replaced."""
    with services.session() as session:
        try:
            record, created = register(session, services.settings, tenant=tenant, raw=body.declaration,
                                       secret=body.secret)
        except ValidationFailed as exc:  # name the field inside the body: declaration.<field> or secret
            field = exc.field if exc.field == "secret" else f"declaration.{exc.field}"
            raise ValidationFailed(field, exc.message) from None
        if not created:
            response.status_code = 200
        return tool_view(record)


@router.get("/v1/tools", response_model=ToolList)
def list_tools(tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """The tenant's tools (never their secrets)."""
    with services.session() as session:
        return {"tools": [tool_view(r) for r in repo.list_tools(session, tenant_id=tenant.id)]}


@router.get("/v1/tools/{name}", response_model=ToolPublic, responses={404: {"description": "No such tool"}})
def get_tool(name: str, tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    with services.session() as session:
        return tool_view(repo.get_tool(session, tenant_id=tenant.id, name=name))


@router.delete("/v1/tools/{name}", status_code=204, responses={404: {"description": "No such tool"}})
def delete_tool(name: str, tenant: TenantDep, services: ServicesDep) -> Response:
    with services.session() as session:
        repo.remove_tool(session, tenant_id=tenant.id, name=name)
    return Response(status_code=204)
