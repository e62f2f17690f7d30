"""LLM accounting of the steps: the investigation's bound reasoner, and tracing/charging each call's usage."""

from __future__ import annotations

from typing import Any, Protocol

from bootstrap import Services
from investigation.errors import BudgetExceeded, PermanentError
from investigation.ports import Reasoner
from investigation.state import LLM_STOPS, StopReason
from storage import repositories as repo

# A reasoner raises these only when the LLM is out and no fallback may finish (SLEUTH_LLM_FALLBACK=none).
LLM_OUT = (BudgetExceeded, PermanentError)


class Owned(Protocol):
    """An investigation as far as its reasoner needs it: its row, or what a step knows of it
    (`steps.Facts`)."""

    @property
    def id(self) -> str: ...

    @property
    def tenant_id(self) -> str: ...


def bound_reasoner(services: Services, session: Any, inv: Owned) -> Reasoner:
    """The investigation's reasoner, charging its LLM tokens to the investigation and the tenant."""
    if services.settings.llm.provider == "heuristic":
        return services.reasoner  # no LLM calls to charge (`Services.reasoner_for`): no tenant limits read
    limits = repo.get_tenant(session, tenant_id=inv.tenant_id).limits or {}
    daily = limits.get("llm_tokens_per_day")
    return services.reasoner_for(inv.id, inv.tenant_id, daily_limit=None if daily is None else int(daily))


def llm_stop_reason(exc: Exception) -> str:
    return StopReason.TOKEN_BUDGET if isinstance(exc, BudgetExceeded) else StopReason.LLM_UNAVAILABLE


def record_llm(
    services: Services, inv_id: str, reasoner: Reasoner | None, phase: str, hop: int = 0
) -> str | None:
    """Trace every LLM call of the step (model, tokens, cache reads/writes) and every fallback, add the
    tokens to the investigation's totals; return `token_budget`/`llm_unavailable` if the LLM ran out."""
    records = reasoner.take_usage() if reasoner is not None else []
    if not records:
        return None
    stop: str | None = None
    added_in = added_out = 0
    with services.session() as session:
        for i, record in enumerate(records):
            key = f"llm:{phase}:{hop}:{i}" if phase == "reduce" else f"llm:{phase}:{i}"
            if repo.add_event(session, investigation_id=inv_id, step_key=key, kind=record.kind, hop=hop,
                              data=record.trace_data()):
                added_in += record.input_total
                added_out += record.output_tokens
            if record.fallback and record.reason in LLM_STOPS:
                stop = stop or record.reason
        if added_in or added_out:
            inv = repo.get_investigation(session, investigation_id=inv_id)
            repo.set_investigation(session, investigation_id=inv_id,
                                   llm_input_tokens=inv.llm_input_tokens + added_in,
                                   llm_output_tokens=inv.llm_output_tokens + added_out)
    return stop
