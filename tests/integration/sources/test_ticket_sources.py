"""Solved tickets become internal evidence — agents' public replies only, personal data redacted, linked to
the
ticket — and recurring resolutions become FAQ candidates that reach customers only once approved."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app import source_sync
from app.channels import add_channel
from app.sources import add_source, approve_faq, get_source, list_faq, refresh_faq
from investigation.state import Visibility
from storage import repositories as repo
from tests.support.help_centers import HelpCenter
from tests.support.stack import Stack

REQUESTER, AGENT, BOT = 1, 2, 3


@pytest.fixture()
def fake() -> Iterator[HelpCenter]:
    center = HelpCenter()
    yield center
    center.close()


def _tenant(stack: Stack):  # type: ignore[no-untyped-def]
    with stack.services.session() as session:
        return repo.get_tenant(session, tenant_id=stack.tenant_id)


def test_zendesk_solved_tickets_are_redacted_internal_evidence_and_faq_candidates(stack: Stack,
                                                                                 fake: HelpCenter) -> None:
    fake.zd_ticket(
        11,
        subject="Password reset link expired",
        status="solved",
        comments=[
            (
                REQUESTER,
                True,
                "Hi, I'm jane.doe@example.org, my card 4111 1111 1111 1111, call +1 (555) 010-4477",
            ),
            (BOT, False, "Sleuth ref msg_123: draft answer from the bot"),
            (BOT, True, "Public reply posted by Sleuth. Sleuth ref msg_124"),
            (AGENT, False, "internal: checked the logs"),
            (AGENT, True, "The reset link lasts 30 minutes; request a new one from the quokka login page."),
        ],
    )
    fake.zd_ticket(
        12,
        subject="Reset password link expired again",
        status="closed",
        comments=[
            (REQUESTER, True, "Same problem"),
            (AGENT, True, "Request a new reset link from the quokka login page."),
        ],
    )
    fake.zd_ticket(
        13, subject="Invoice VAT number wrong", status="open", comments=[(AGENT, True, "Looking.")]
    )
    tenant = _tenant(stack)
    add_channel(
        stack.services,
        tenant=tenant,
        data={
            "name": "zd",
            "type": "zendesk",
            "subdomain": "acme",
            "email": "bot@acme.test",
            "token": "zd-token",
            "base_url": fake.url,
        },
    )
    add_source(
        stack.services,
        tenant=tenant,
        data={
            "name": "solved",
            "type": "zendesk-tickets",
            "channel": "zd",
            "status": ["solved", "closed"],
            "since": "30d",
        },
    )
    source = get_source(stack.services, tenant=tenant, name="solved")
    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_error is None, ended.last_error
    assert ended.items == 2  # the open ticket is not evidence

    bm25 = stack.services.backends["bm25"]
    hits = bm25.search(stack.tenant_id, "reset link quokka login page", 10)
    assert {p.source_id for p in hits} == {f"{source.id}:11@v1", f"{source.id}:12@v1"}
    assert all(p.visibility is Visibility.INTERNAL for p in hits)
    assert {p.url for p in hits} == {f"{fake.url}/agent/tickets/11", f"{fake.url}/agent/tickets/12"}
    text = " ".join(p.text for p in hits)
    for leaked in ("jane.doe", "4111", "010-4477", "from the bot", "posted by Sleuth", "internal: checked"):
        assert leaked not in text
    # Nothing from tickets reaches a customer before approval.
    assert not bm25.search(
        stack.tenant_id, "reset link quokka login page", 10, visibility=[Visibility.PUBLIC]
    )

    assert refresh_faq(stack.services, source) == 1
    faq = list_faq(stack.services, tenant=tenant)[0]
    assert faq["status"] == "pending" and faq["tickets"] == 2 and "quokka" in faq["answer"]
    approve_faq(stack.services, tenant=tenant, faq_id=faq["id"])
    public = bm25.search(stack.tenant_id, "reset link quokka login page", 10, visibility=[Visibility.PUBLIC])
    assert [p.source_id for p in public] == [f"{source.id}:faq:{_key(stack, faq['id'])}"]

    # A solved ticket reopened leaves the engines in the next sync.
    fake.zd_ticket(
        12, subject="Reset password link expired again", status="open", comments=[(AGENT, True, "x")]
    )
    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_stats["deleted"] == 1 and ended.items == 1


def _key(stack: Stack, faq_id: str) -> str:
    from storage.source_models import FaqCandidate

    with stack.services.session() as session:
        row = session.get(FaqCandidate, faq_id)
        assert row is not None
        return row.key


def test_freshdesk_resolved_tickets_keep_agent_replies_only(stack: Stack, fake: HelpCenter) -> None:
    fake.fd_ticket(21, subject="Export to CSV fails", status=4, conversations=[
        (True, False, "It fails, my phone is 020 7946 0958"),
        (False, True, "private: known bug"),
        (False, False, "Use the narwhal exporter under Reports; it handles large files.")])
    fake.fd_ticket(22, subject="Where is the API", status=2, conversations=[(False, False, "Docs.")])
    tenant = _tenant(stack)
    add_channel(stack.services, tenant=tenant, data={"name": "fd", "type": "freshdesk", "domain": "acme",
                                                     "api_key": "fd-key", "base_url": fake.url})
    add_source(stack.services, tenant=tenant, data={"name": "resolved", "type": "freshdesk-tickets",
                                                    "channel": "fd", "status": ["resolved"]})
    source = get_source(stack.services, tenant=tenant, name="resolved")
    ended = source_sync.run_inline(stack.services, source.id)
    assert ended.last_error is None and ended.items == 1
    hits = stack.services.backends["vector"].search(stack.tenant_id, "narwhal exporter reports CSV", 5)
    top = [p for p in hits if p.source_id.startswith(source.id)]
    assert top and top[0].url == f"{fake.url}/a/tickets/21" and top[0].visibility is Visibility.INTERNAL
    assert "7946" not in top[0].text and "known bug" not in top[0].text
