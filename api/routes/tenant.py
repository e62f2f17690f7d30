"""``GET /v1/tenant``: who the key belongs to and the caps that apply to its investigations."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from api.auth import TenantDep
from api.deps import ServicesDep
from app import admission
from app.intake import budget_caps

router = APIRouter(prefix="/v1/tenant", tags=["tenant"])


class TenantCaps(BaseModel):
    """The effective caps: a request's `budget` may lower but never exceed `budget_caps`."""

    budget_caps: dict[str, int]
    max_in_flight: int
    intake_per_minute: int
    llm_tokens_per_day: int


class TenantPublic(BaseModel):
    id: str
    name: str
    limits: TenantCaps


@router.get("", response_model=TenantPublic)
def get_tenant(tenant: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """The calling tenant and its effective limits (server defaults lowered by the tenant's own)."""
    settings = services.settings
    own = tenant.limits or {}
    return {"id": tenant.id, "name": tenant.name, "limits": {
        "budget_caps": budget_caps(own, settings),
        "max_in_flight": admission.max_in_flight(services, tenant),
        "intake_per_minute": admission.intake_per_minute(services, tenant),
        "llm_tokens_per_day": int(own.get("llm_tokens_per_day", settings.limits.tenant_daily_llm_tokens)),
    }}
