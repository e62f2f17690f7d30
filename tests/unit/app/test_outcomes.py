"""The pure parts of draft outcomes: the edit ratio and its bands, and parsing the helpdesks' update
bodies."""

from __future__ import annotations

import pytest

from app.outcomes import TicketUpdate, draft_use, edit_ratio, parse_freshdesk_update, parse_zendesk_update
from investigation.errors import ValidationFailed

DRAFT = "Refunds take five business days after approval [1]."


def test_the_same_text_up_to_case_spacing_markup_and_markers_is_unchanged() -> None:
    assert edit_ratio(DRAFT, "<p>refunds take five  business days after approval.</p>") == 0.0
    assert draft_use(edit_ratio(DRAFT, DRAFT.upper().replace(" [1]", ""))) == "unchanged"


def test_an_edited_and_an_unrelated_reply() -> None:
    edited = edit_ratio(DRAFT, "Refunds usually take five business days once approved by billing.")
    assert 0.05 < edited < 0.8 and draft_use(edited) == "edited"
    other = edit_ratio(DRAFT, "Please restart your router and try again.")
    assert other >= 0.8 and draft_use(other) == "unused"


def test_zendesk_event_and_trigger_bodies() -> None:
    tags = {"type": "zen:event-type:ticket.tags_changed", "detail": {"id": "7", "actor_id": 3},
            "event": {"tags": {"added": ["sleuth_wrong"], "removed": []}}}
    assert parse_zendesk_update(tags) == TicketUpdate(7, tags_added=("sleuth_wrong",), actor="3")
    status = {"type": "zen:event-type:ticket.status_changed", "detail": {"id": 7},
              "event": {"current": "SOLVED", "previous": "OPEN"}}
    assert parse_zendesk_update(status) == TicketUpdate(7, status="solved", previous_status="open")
    trigger = {
        "sleuth_event": "ticket_updated",
        "ticket": {"id": "7", "tags": "vip sleuth_helpful", "status": "Solved", "latest_public_comment": " "},
    }
    assert parse_zendesk_update(trigger) == TicketUpdate(
        7, tags_added=("vip", "sleuth_helpful"), status="solved"
    )
    assert parse_zendesk_update({"type": "zen:event-type:ticket.created", "detail": {"id": 7}}) is None
    assert parse_zendesk_update({"ticket": {"id": 7}}) is None  # a new-ticket trigger
    with pytest.raises(ValidationFailed) as caught:
        parse_zendesk_update({"type": "zen:event-type:ticket.tags_changed", "detail": {"id": "x"}})
    assert caught.value.field == "detail.id"


def test_freshdesk_bodies() -> None:
    assert parse_freshdesk_update({"ticket_id": 5, "subject": "s", "description": "d"}) is None
    got = parse_freshdesk_update(
        {"ticket_id": "5", "event": "ticket_updated", "status": "Closed", "tags": ["a"]}
    )
    assert got == TicketUpdate(5, tags_added=("a",), status="closed")
