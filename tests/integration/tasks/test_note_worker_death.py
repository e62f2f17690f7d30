"""The worker dies in the middle of a helpdesk note post: exactly one note on the ticket.

A real Celery worker process posts the note to a strict local Zendesk/Freshdesk server that stores the
note and then holds its answer; the pool process doing the POST is SIGKILLed while it waits. The task is
requeued (`acks_late`, `reject_on_worker_lost`); the next attempt sees an attempt that started and was
never recorded, lists the ticket's notes, finds its `Sleuth ref`, and posts nothing more.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from app.channels import add_channel
from cli.commands import celery_for
from storage import repositories as repo
from tests.integration.tasks.conftest import Stack, build_stack, wait_until
from tests.support.helpdesks import FreshdeskFake, ZendeskFake
from workers import names

# Exactly one note whichever database holds the attempt's record.
pytestmark = pytest.mark.both_databases


def _active_pid(stack: Stack, task: str) -> int | None:
    active = celery_for(stack.settings).control.inspect(timeout=1.0).active() or {}
    for tasks in active.values():
        for item in tasks:
            if item.get("name") == task and item.get("worker_pid"):
                return int(item["worker_pid"])
    return None


@pytest.mark.parametrize("kind", ["zendesk", "freshdesk"])
def test_worker_killed_mid_note_post_leaves_exactly_one_note(
    tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str, kind: str
) -> None:
    # A 4 s request timeout and a 1 s lock margin: the dead worker's lock frees after 3 x 4 + 1 s. The kill
    # must land within the 4 s the request is open (as it had to within the 4 s hold when the timeout was 6
    # s).
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url, webhook_timeout=4.0,
                        delivery_lock_margin=1.0)
    desk: ZendeskFake | FreshdeskFake = (ZendeskFake("bot@acme.test", "tok", {4242}) if kind == "zendesk"
                                         else FreshdeskFake("key", {4242}))
    desk.hold_after_write = 5.0  # the note is stored; the answer would come after the request timed out
    try:
        with stack.services.session() as session:
            tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
        fields = ({"type": "zendesk", "subdomain": "acme", "email": "bot@acme.test", "token": "tok"}
                  if kind == "zendesk" else {"type": "freshdesk", "domain": "acme", "api_key": "key"})
        add_channel(stack.services, tenant=tenant, data={"name": "desk", "base_url": desk.base_url, **fields})
        stack.start_worker(concurrency=1)
        stack.wait_ready()
        inv_id = stack.ask("What does error ERR_4021 mean?",
                           callback={"type": kind, "channel": "desk", "ticket_id": 4242})
        assert wait_until(lambda: len(desk.notes[4242]) == 1, timeout=90), "the note was never posted"
        pid = _active_pid(stack, names.T_DELIVER)
        assert pid is not None, "no deliver task in flight"
        os.kill(pid, signal.SIGKILL)  # mid-request: the helpdesk stored the note, nobody heard the answer

        def delivered() -> bool:  # marked delivered, then the attempt is logged: wait for both
            with stack.services.session() as session:
                [d] = repo.list_deliveries(session, investigation_id=inv_id)
                return d.status == "delivered" and d.attempts >= 1

        assert wait_until(delivered, timeout=90), "never delivered after the kill"
        with stack.services.session() as session:
            [d] = repo.list_deliveries(session, investigation_id=inv_id)
            log = repo.list_attempts(session, delivery_id=d.id)
        writes = desk.writes()
        duplicates = len(desk.notes[4242]) - 1
        print(f"\n[{kind}] worker killed mid-post: attempted={writes} delivered={len(desk.notes[4242])} "
              f"duplicates={duplicates} attempts_logged={[(a.number, a.status_code, a.detail) for a in log]} "
              f"started={d.started}")
        assert len(desk.notes[4242]) == 1 and duplicates == 0 and writes == 1
        assert f"Sleuth ref {d.id}" in str(desk.notes[4242][0])
        assert [r["method"] for r in desk.requests][-1] == "GET"  # looked before (not) posting again
        assert log[-1].detail and "not posted again" in log[-1].detail
        # The killed attempt began (started=1) and was never recorded; the one that found the note is #1.
        assert (d.started, d.attempts, len(log)) == (1, 1, 1)
    finally:
        stack.stop_workers()
        desk.close()




def test_worker_killed_mid_smtp_send_keeps_one_message_id(tmp_path: Path, redis_url: str, redis_prefix: str,
                                                           db_url: str) -> None:
    """SMTP cannot be asked what it already accepted: a mail may go twice, but always as the same
    Message-ID, so mail clients show one message in the thread. This measures how often."""
    from tests.support.smtp import SmtpServer

    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url, smtp_timeout=4.0,
                        delivery_lock_margin=1.0)  # the lock frees after 3 x 4 + 1 s, as above
    server = SmtpServer()
    server.handler.hold_after_data = 5.0
    try:
        with stack.services.session() as session:
            tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
        add_channel(
            stack.services,
            tenant=tenant,
            data={
                "name": "mail",
                "type": "smtp",
                "host": "127.0.0.1",
                "port": server.port,
                "from": "sleuth@acme.example.com",
            },
        )
        stack.start_worker(concurrency=1)
        stack.wait_ready()
        inv_id = stack.ask("What does error ERR_4021 mean?",
                           callback={"type": "email", "channel": "mail", "to": ["agent@example.com"]})
        assert wait_until(lambda: len(server.received) == 1, timeout=90), "the mail was never sent"
        pid = _active_pid(stack, names.T_DELIVER)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        server.handler.hold_after_data = 0.0

        def delivered() -> bool:
            with stack.services.session() as session:
                [d] = repo.list_deliveries(session, investigation_id=inv_id)
                return d.status == "delivered"

        assert wait_until(delivered, timeout=90)
        ids = {m.message["Message-ID"] for m in server.received}
        print(f"\n[email] worker killed mid-send: attempted={server.handler.attempts} "
              f"received={len(server.received)} distinct_message_ids={len(ids)}")
        assert len(ids) == 1
    finally:
        stack.stop_workers()
        server.close()
