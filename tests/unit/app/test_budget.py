"""The effective budget: server default, lowered by the tenant, lowered by the request — computed once."""

from __future__ import annotations

import pytest

from app.intake import budget_caps, effective_budget, parse_request
from app.requests import BudgetOverride
from config.settings import Settings
from investigation.errors import ValidationFailed

SETTINGS = Settings(max_hops=3, max_retrieval_calls=24, max_llm_tokens=1000, deadline_seconds=120)


def test_defaults_tenant_caps_and_request_lower_in_turn() -> None:
    assert effective_budget(None, {}, SETTINGS) == {
        "max_hops": 3, "max_retrieval_calls": 24, "max_llm_tokens": 1000, "deadline_seconds": 120}
    capped = effective_budget(None, {"max_hops": 2, "max_retrieval_calls": 50}, SETTINGS)
    assert capped["max_hops"] == 2 and capped["max_retrieval_calls"] == 24  # a tenant limit never raises
    asked = effective_budget(BudgetOverride(max_hops=1), {"max_hops": 2}, SETTINGS)
    assert asked["max_hops"] == 1


def test_a_request_above_the_cap_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationFailed) as err:
        effective_budget(BudgetOverride(max_hops=3), {"max_hops": 2}, SETTINGS)
    assert err.value.field == "budget.max_hops" and "at most 2" in err.value.message


def test_single_shot_is_one_hop_whatever_the_budget() -> None:
    assert effective_budget(None, {}, SETTINGS, mode="single-shot")["max_hops"] == 1


@pytest.mark.parametrize(("data", "field"), [
    ({"question": "   "}, "question"),
    ({"question": "q", "mode": "fast"}, "mode"),
    ({"question": "q", "audience": "everyone"}, "audience"),
    ({"question": "q", "principals": [""]}, "principals"),
    ({"question": "q", "context": {"requester": {"email": "not-an-address"}}}, "context.requester.email"),
    ({"question": "q", "surprise": 1}, "surprise"),
])
def test_requests_built_in_code_name_the_bad_field(data: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        parse_request(data)
    assert err.value.field == field


def test_the_caps_get_tenant_reports_are_the_ones_intake_enforces() -> None:
    limits = {"max_hops": 2, "max_retrieval_calls": 50, "max_llm_tokens": None}  # null: no tenant limit
    caps = budget_caps(limits, SETTINGS)
    assert caps == {"max_hops": 2, "max_retrieval_calls": 24, "max_llm_tokens": 1000, "deadline_seconds": 120}
    assert effective_budget(None, limits, SETTINGS) == caps
    for name, cap in caps.items():
        with pytest.raises(ValidationFailed):
            effective_budget(BudgetOverride(**{name: cap + 1}), limits, SETTINGS)
