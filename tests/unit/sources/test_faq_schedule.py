"""FAQ grouping of solved tickets, durations and due sources."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from investigation.errors import ValidationFailed
from investigation.sources.faq import Resolved, group
from investigation.sources.schedule import is_due, parse_duration, parse_every


def test_similar_questions_group_and_singletons_do_not() -> None:
    tickets = [
        Resolved("1", "How do I reset my password?", "Use the reset link on the login page."),
        Resolved(
            "2", "Reset password not working", "Clear cookies, then use the reset link on the login page."
        ),
        Resolved("3", "password reset how", "The reset link."),
        Resolved("4", "Invoice shows wrong VAT number", "Edit the VAT number under Billing."),
    ]
    candidates = group(tickets, threshold=0.3)
    assert len(candidates) == 1
    faq = candidates[0]
    assert faq.ticket_ids == ("1", "2", "3")
    assert faq.answer.startswith("Clear cookies")  # the most complete resolution
    assert group(tickets, threshold=0.3)[0].key == faq.key  # stable across runs


def test_durations() -> None:
    assert parse_duration("90d", field="since") == 90 * 86400
    assert parse_every("15m") == 900
    with pytest.raises(ValidationFailed) as caught:
        parse_every("30s")
    assert caught.value.field == "every"
    with pytest.raises(ValidationFailed):
        parse_duration("soon", field="since")


def test_due() -> None:
    now = datetime(2026, 1, 1, 12, 0)
    assert is_due(every_seconds=900, last_started=None, now=now)
    assert not is_due(every_seconds=900, last_started=now - timedelta(minutes=10), now=now)
    assert is_due(every_seconds=900, last_started=now - timedelta(minutes=15), now=now)
