"""Tenant limits are checked when a tenant is created: unknown keys and bad values name the field."""

from __future__ import annotations

import pytest

from investigation.errors import ValidationFailed
from storage._tenants import validate_limits


def test_known_limits_pass_through() -> None:
    assert validate_limits({"max_hops": 2, "llm_tokens_per_day": 100_000}) == {
        "max_hops": 2, "llm_tokens_per_day": 100_000}
    assert validate_limits(None) == {}


@pytest.mark.parametrize(("limits", "field"), [
    ({"max_hopz": 2}, "limits.max_hopz"),
    ({"max_hops": -1}, "limits.max_hops"),
    ({"max_hops": "3"}, "limits.max_hops"),
    ({"deadline_seconds": True}, "limits.deadline_seconds"),
])
def test_bad_limits_name_the_field(limits: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        validate_limits(limits)
    assert caught.value.field == field
