"""How long a channel is held after a success, from the rate-limit headroom the receiver reported."""

from __future__ import annotations

import pytest

from investigation.ports import Delivered
from tasks.delivery_channels import MAX_PACE_SECONDS, pace_after


def test_no_headroom_reported_holds_nothing() -> None:
    assert pace_after(Delivered(204)) == 0.0


def test_plenty_left_holds_nothing() -> None:
    assert pace_after(Delivered(200, rate_limit_remaining=400, rate_limit=700)) == 0.0


def test_under_five_percent_left_spreads_the_rest_over_the_minute() -> None:
    assert pace_after(Delivered(200, rate_limit_remaining=29, rate_limit=700)) == pytest.approx(2.0)


def test_without_the_window_size_five_left_counts_as_low() -> None:
    assert pace_after(Delivered(201, rate_limit_remaining=6)) == 0.0
    assert pace_after(Delivered(201, rate_limit_remaining=5)) == pytest.approx(10.0)
    assert pace_after(Delivered(201, rate_limit_remaining=0)) == MAX_PACE_SECONDS
