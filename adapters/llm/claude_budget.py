"""LLM token budgets of one investigation and its tenant, in Redis: checked before a call, charged after.

`RedisTokenBudget` also remembers, for the whole investigation and across tasks and workers, that the
LLM is out (`token_budget` or `llm_unavailable`), so every later step goes straight to the fallback.
"""

from __future__ import annotations

from investigation.errors import BudgetExceeded
from investigation.ports import TokenBudget
from storage.redis_state import RedisState

_DAY = 86_400


__all__ = ["NoBudget", "RedisTokenBudget", "TokenBudget"]


class NoBudget:
    """No limits and no memory: the reasoner outside any investigation (tests, tools)."""

    def __init__(self) -> None:
        self._stopped: tuple[str, str] | None = None

    def check(self, estimate: int) -> None:
        return None

    def charge(self, tokens: int) -> None:
        return None

    def stopped(self) -> tuple[str, str] | None:
        return self._stopped

    def stop(self, reason: str, detail: str) -> None:
        self._stopped = self._stopped or (reason, detail)


class RedisTokenBudget:
    """The investigation's `llm_tokens` counter (limit set by `init_budget`; 0 = unlimited) and the
    tenant's tokens of the UTC day (`daily_limit`; 0 = unlimited)."""

    def __init__(self, state: RedisState, inv_id: str, tenant_id: str, daily_limit: int) -> None:
        self.state = state
        self.inv_id = inv_id
        self.tenant_id = tenant_id
        self.daily_limit = daily_limit

    def check(self, estimate: int) -> None:
        usage = self.state.usage(self.inv_id)
        limit = int(usage.get("max_llm_tokens", 0))
        used = int(usage.get("llm_tokens", 0))
        if limit and used + estimate > limit:
            raise BudgetExceeded("llm_tokens", f"{used} of {limit} LLM tokens used; the next call needs "
                                               f"about {estimate}")
        if self.daily_limit:
            spent = self.state.tenant_tokens_used(self.tenant_id)
            if spent + estimate > self.daily_limit:
                raise BudgetExceeded(
                    "tenant_llm_tokens", f"the tenant used {spent} of its {self.daily_limit} LLM tokens today"
                )

    def charge(self, tokens: int) -> None:
        if tokens <= 0:
            return
        if not self.state.charge(self.inv_id, "llm_tokens", tokens):
            usage = self.state.usage(self.inv_id)  # over the limit: fill it, so the next check stops
            room = int(usage.get("max_llm_tokens", 0)) - int(usage.get("llm_tokens", 0))
            if room > 0:
                self.state.charge(self.inv_id, "llm_tokens", room)
        if self.daily_limit and not self.state.charge_tenant_tokens(self.tenant_id, tokens, self.daily_limit):
            room = self.daily_limit - self.state.tenant_tokens_used(self.tenant_id)
            if room > 0:
                self.state.charge_tenant_tokens(self.tenant_id, room, self.daily_limit)

    def _flag(self) -> str:
        return self.state.key("llm_stopped", self.inv_id)

    def stopped(self) -> tuple[str, str] | None:
        raw = self.state.client.get(self._flag())
        if raw is None:
            return None
        reason, _, detail = (raw.decode() if isinstance(raw, bytes) else str(raw)).partition("|")
        return reason, detail

    def stop(self, reason: str, detail: str) -> None:
        self.state.client.set(self._flag(), f"{reason}|{detail}"[:500], nx=True, ex=_DAY)
