"""Pydantic models at the HTTP boundary: what a client may send, and the shape of what it gets back.

Response models allow extra keys: the public JSON is built by `storage.repositories` (one place), and
these models document and type its core for OpenAPI without dropping anything it adds.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from app.requests import BudgetOverride, InvestigationRequest, WebhookCallback
from storage.views import CitationPublic, EvidencePublic, InvestigationPublic

__all__ = ["BudgetOverride", "CitationPublic", "EvidencePublic", "InvestigationCreate", "InvestigationPublic",
           "InvestigationRequest", "WebhookCallback"]


# What a client may send is defined once, in the application layer, for every way in.
InvestigationCreate = InvestigationRequest


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TraceEventPublic(_Open):
    id: int
    kind: str
    hop: int = 0
    data: dict[str, Any] = {}


class TracePublic(BaseModel):
    id: str
    events: list[TraceEventPublic]


class AttemptPublic(_Open):
    number: int
    status_code: int | None = None
    error: str | None = None
    duration_ms: float = 0.0


class DeliveryPublic(_Open):
    id: str
    investigation_id: str
    channel: str
    status: str
    attempts: int
    last_error: str | None = None


class DeliveryDetail(DeliveryPublic):
    attempt_log: list[AttemptPublic] = []


class DeliveryList(BaseModel):
    id: str
    deliveries: list[DeliveryDetail]


class DeliveryPage(BaseModel):
    deliveries: list[DeliveryPublic]
