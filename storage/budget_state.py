"""Budgets in Redis: an investigation's counters against its limits and deadline, a tenant's LLM tokens of
the day. Each check-and-charge is one Lua script, so concurrent workers never overspend. The base of
`storage.redis_state.RedisState`, which adds the rest of Sleuth's short-lived state under the same prefix.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import redis

from investigation.errors import TransientError
from storage._redis_scripts import CHARGE, CHARGE_ONCE, CHARGE_PLAIN, INIT_BUDGET

COUNTERS = ("hops", "retrieval_calls", "llm_tokens")
_DAY = 86_400

P = ParamSpec("P")
R = TypeVar("R")


def _translated(method: Callable[P, R]) -> Callable[P, R]:
    """Redis being unreachable is a transient condition for the caller (a task retries)."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise TransientError(f"redis unavailable: {exc}") from exc

    return wrapper


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class BudgetState:
    """Budgets of investigations and tenants, under one key prefix."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        if not prefix or ":" in prefix:
            raise ValueError("prefix must be non-empty and contain no ':'")
        self.client = client
        self.prefix = prefix
        self._init_budget = client.register_script(INIT_BUDGET)
        self._charge = client.register_script(CHARGE)
        self._charge_once = client.register_script(CHARGE_ONCE)
        self._charge_plain = client.register_script(CHARGE_PLAIN)

    def key(self, *parts: object) -> str:
        return ":".join([self.prefix, *(str(p) for p in parts)])

    # -- budgets -------------------------------------------------------------------------------------

    @_translated
    def init_budget(
        self,
        inv_id: str,
        *,
        max_hops: int,
        max_retrieval_calls: int,
        max_llm_tokens: int,
        deadline_ts: float,
        ttl: int = _DAY,
    ) -> None:
        args: list[str | int] = [
            int(max_hops),
            int(max_retrieval_calls),
            int(max_llm_tokens),
            repr(float(deadline_ts)),
            int(ttl),
        ]
        self._init_budget(keys=[self.key("budget", inv_id)], args=args)

    @_translated
    def charge(self, inv_id: str, counter: str, amount: int = 1) -> bool:
        """Add `amount` to `counter` if that keeps it within its limit; otherwise charge nothing."""
        return int(self._charge(keys=[self.key("budget", inv_id)], args=_charge_args(counter, amount))) == 1

    @_translated
    def charge_once(self, inv_id: str, marker: str, counter: str, amount: int = 1, ttl: int = _DAY) -> bool:
        """`charge` unless `marker` was used before (the `once` key of that name, for `ttl` seconds), in one
        round trip; True when this call was the first with the marker (charged, or over the limit)."""
        keys = [self.key("budget", inv_id), self.key("once", marker)]
        return int(self._charge_once(keys=keys, args=[*_charge_args(counter, amount), int(ttl)])) != 2

    @_translated
    def usage(self, inv_id: str) -> dict[str, Any]:
        return _usage(self.client.hgetall(self.key("budget", inv_id)))

    @_translated
    def charge_tenant_tokens(self, tenant_id: str, amount: int, daily_limit: int) -> bool:
        """Charge LLM tokens to the tenant's budget of the current UTC day, if it stays within the limit."""
        if amount < 0:
            raise ValueError("amount must not be negative")
        key = self._tenant_tokens_key(tenant_id)
        return int(self._charge_plain(keys=[key], args=[int(amount), int(daily_limit), 2 * _DAY])) == 1

    @_translated
    def tenant_tokens_used(self, tenant_id: str) -> int:
        return int(self.client.get(self._tenant_tokens_key(tenant_id)) or 0)

    def _tenant_tokens_key(self, tenant_id: str) -> str:
        return self.key("tenant", tenant_id, "llm_tokens", time.strftime("%Y-%m-%d", time.gmtime()))


def _charge_args(counter: str, amount: int) -> list[str | int]:
    """The `CHARGE` script's arguments, checked: a known counter, an amount that is not negative."""
    if counter not in COUNTERS:
        raise ValueError(f"unknown budget counter {counter!r}")
    if amount < 0:
        raise ValueError("amount must not be negative")
    return [counter, int(amount)]


def _usage(raw_hash: dict[Any, Any]) -> dict[str, Any]:
    raw = {_text(k): _text(v) for k, v in raw_hash.items()}
    usage: dict[str, Any] = {name: int(raw.get(name, 0)) for name in COUNTERS}
    usage.update({f"max_{name}": int(raw.get(f"max_{name}", 0)) for name in COUNTERS})
    usage["deadline_ts"] = float(raw.get("deadline_ts", 0.0))
    return usage

