"""`submit_investigation`: validate → apply the tenant's limits → check callbacks → persist → enqueue.

The only place an investigation is created. The effective budget is computed here once and stored on
the investigation; the steps read it from there and nowhere else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app import admission
from app.callbacks import check_callbacks
from app.requests import BudgetOverride, InvestigationRequest
from bootstrap import Services
from config.settings import Settings
from investigation.errors import Conflict, TransientError, ValidationFailed
from investigation.state import Mode, Status, StopReason
from storage import repositories as repo
from storage.models import Investigation, Tenant

log = logging.getLogger(__name__)

BUDGET_FIELDS = ("max_hops", "max_retrieval_calls", "max_llm_tokens", "deadline_seconds")

Launcher = Callable[[str], None]


@dataclass(frozen=True)
class Submitted:
    """The outcome of a submission: the investigation's id, and False when an idempotent retry found it."""

    id: str
    created: bool


def budget_caps(tenant_limits: dict[str, Any] | None, settings: Settings) -> dict[str, int]:
    """The most a request's `budget` may ask for, per limit: the server default lowered by the tenant's own
    limit (what `GET /v1/tenant` reports, and what `effective_budget` enforces)."""
    caps: dict[str, int] = {}
    for name in BUDGET_FIELDS:
        caps[name] = int(getattr(settings.limits, name))
        tenant_cap = (tenant_limits or {}).get(name)
        if tenant_cap is not None:
            caps[name] = min(caps[name], int(tenant_cap))
    return caps


def effective_budget(override: BudgetOverride | None, tenant_limits: dict[str, Any] | None,
                     settings: Settings, *, mode: str = Mode.AGENTIC.value) -> dict[str, int]:
    """Each limit is the server default, lowered by the tenant's limit, lowered again by the request.

    An override above the cap is refused (ValidationFailed naming ``budget.<name>``). A single-shot
    investigation has one hop whatever the budget says.
    """

    budget: dict[str, int] = {}
    for name, cap in budget_caps(tenant_limits, settings).items():
        asked = getattr(override, name) if override is not None else None
        if asked is not None and asked > cap:
            raise ValidationFailed(f"budget.{name}", f"must be at most {cap} for this tenant")
        budget[name] = cap if asked is None else int(asked)
    if mode == Mode.SINGLE_SHOT.value:
        budget["max_hops"] = 1
    return budget


def submit_investigation(services: Services, *, tenant: Tenant, request: InvestigationRequest,
                         launch: Launcher, idempotency_key: str | None = None,
                         rate_limit: bool = True, fair: bool = True,
                         same_key_same_request: bool = True, in_process: bool = False) -> Submitted:
    """Create (or, for a repeated idempotency key, find) the tenant's investigation and enqueue it.

    Raises ValidationFailed (a field named) before anything is written, Conflict when the idempotency key
    was used for a different request, TooManyRequests over the tenant's intake rate (`rate_limit`), and
    TransientError when the queue cannot take it (the investigation is then marked failed, so nothing
    waits forever). With `fair`, a tenant at its in-flight cap has the investigation held back in order
    (`app.admission`); an operator's own runs (CLI bench) may pass False for both. Helpdesk hooks key on
    the ticket, whose text may change between triggers: they pass `same_key_same_request=False`.
    `in_process`: `launch` runs the investigation to its end in this process (`sleuth bench`, `sleuth ask`
    without a queue): the embedding of its question (hop 1 searches it) starts once the request is accepted,
    while the investigation is written and started, and its fairness slot is given back when `launch`
    returns.
    """

    settings = services.settings
    budget = effective_budget(request.budget, tenant.limits, settings, mode=request.mode)
    callback: Any = None
    if request.callback is not None:
        raw = ([c.model_dump(mode="json") for c in request.callback] if isinstance(request.callback, list)
               else request.callback.model_dump(mode="json"))
        callback = check_callbacks(services, raw, tenant=tenant, field="callback")
    context = request.context.model_dump(mode="json", exclude_none=True) if request.context else {}
    if idempotency_key is not None and same_key_same_request:
        _same_request_or_conflict(services, tenant, idempotency_key, request=request, budget=budget,
                                  callback=callback, context=context)
    if rate_limit:
        admission.check_rate(services, tenant)
    if in_process:  # accepted: nothing is embedded for a refused request
        services.prepare_queries([request.question])
    with services.session() as session:
        inv, created = repo.create_investigation(
            session, tenant=tenant, question=request.question, mode=request.mode, callback=callback,
            budget=budget, idempotency_key=idempotency_key, deadline_seconds=budget["deadline_seconds"],
            audience=request.audience, principals=list(request.principals), context=context)
        inv_id = inv.id
    if created:
        if not fair:
            _enqueue(services, launch, inv_id)
        else:
            admission.admit(
                services, tenant, inv_id, lambda i: _enqueue(services, launch, i), in_process=in_process
            )
    elif same_key_same_request:  # a race between two first uses of the key: the loser must not differ
        _same_request_or_conflict(services, tenant, idempotency_key or "", request=request, budget=budget,
                                  callback=callback, context=context)
    return Submitted(id=inv_id, created=created)


def _same_request_or_conflict(services: Services, tenant: Tenant, key: str, *, request: InvestigationRequest,
                              budget: dict[str, int], callback: dict[str, Any] | None,
                              context: dict[str, Any]) -> None:
    """Conflict (409) when `key` already names an investigation of this tenant asked differently."""
    from sqlmodel import select


    with services.session() as session:
        inv = session.exec(select(Investigation).where(Investigation.tenant_id == tenant.id,
                                                       Investigation.idempotency_key == key)).first()
        if inv is None:
            return
        before = {"question": inv.question, "mode": inv.mode, "callback": inv.callback, "budget": inv.budget,
                  "audience": inv.audience, "principals": list(inv.principals), "context": inv.context or {}}
    now = {"question": request.question, "mode": request.mode, "callback": callback, "budget": budget,
           "audience": request.audience, "principals": list(request.principals), "context": context}
    differing = sorted(k for k in now if now[k] != before[k])
    if differing:
        raise Conflict(f"Idempotency-Key {key!r} was already used for a different request "
                       f"(differs in: {', '.join(differing)}); use a new key for a new question")


def _enqueue(services: Services, launch: Launcher, inv_id: str) -> None:
    try:
        launch(inv_id)
    except Exception as exc:
        log.exception("enqueue of investigation %s failed", inv_id)
        reason = f"enqueue failed: {type(exc).__name__}: {exc}"
        with services.session() as session:
            repo.finish_investigation(session, investigation_id=inv_id, status=Status.FAILED.value,
                                      stop_reason=StopReason.ERROR.value, error=reason)
        raise TransientError("the queue is unavailable; the investigation was marked failed") from exc


def parse_request(data: dict[str, Any]) -> InvestigationRequest:
    """Validate a request built in code (CLI, bench, hooks); ValidationFailed names the first bad field."""
    from pydantic import ValidationError


    try:
        return InvestigationRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise ValidationFailed(".".join(str(p) for p in first["loc"]) or "request", first["msg"]) from None
