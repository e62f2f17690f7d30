"""A new Zendesk ticket answered on the ticket, end to end on the demo knowledge base: a signed hook over
real HTTP to a real API process, a real Celery worker, a strict local Zendesk that receives the note.
Prints the inbound-to-note latency of each ticket (the figure of the helpdesk issue)."""

from __future__ import annotations

import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from app.channels import add_channel
from app.hooks import zendesk_signature
from storage import repositories as repo
from tests.support.api_process import api_process
from tests.support.helpdesks import ZendeskFake
from tests.support.stack import build_stack
from tests.support.wait import wait_until

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SIGNING = "e2e-signing-secret"


def test_signed_tickets_come_back_as_one_internal_note_each(tmp_path: Path, redis_url: str, redis_prefix: str,
                                                            db_url: str, embeddings_dir: Path) -> None:
    from adapters.search.ingest import ingest, load_documents

    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url,
                        embeddings_dir=embeddings_dir)
    ingest(
        load_documents([EXAMPLES / "kb"]),
        tenant=stack.tenant_id,
        backends=list(stack.services.backends.values()),
    )
    questions = [
        json.loads(line)["question"]
        for line in (EXAMPLES / "demo_questions.jsonl").read_text().splitlines()
        if line.strip()
    ][1:5]
    tickets = list(range(9001, 9001 + len(questions)))
    desk = ZendeskFake("bot@acme.test", "tok", set(tickets))
    with stack.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
    channel = add_channel(stack.services, tenant=tenant, data={
        "name": "zendesk", "type": "zendesk", "subdomain": "acme", "email": "bot@acme.test", "token": "tok",
        "signing_secret": SIGNING, "base_url": desk.base_url})
    try:
        stack.start_worker(concurrency=2)  # boots while the API does
        with api_process(stack.env()) as base:
            stack.wait_ready()
            sent: dict[int, float] = {}
            for ticket, question in zip(tickets, questions, strict=True):
                body = json.dumps({"type": "zen:event-type:ticket.created", "id": f"evt-{ticket}",
                                   "detail": {"id": str(ticket), "subject": "Question from a customer",
                                              "description": f"<p>{question}</p><p>--<br>Sam</p>"}}).encode()
                stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                headers = {"X-Zendesk-Webhook-Signature": zendesk_signature(SIGNING, stamp, body),
                           "X-Zendesk-Webhook-Signature-Timestamp": stamp, "Content-Type": "application/json"}
                sent[ticket] = time.time()
                response = httpx.post(f"{base}{channel['inbound_url']}", content=body, headers=headers)
                assert response.status_code == 202, response.text
                replay = httpx.post(f"{base}{channel['inbound_url']}", content=body, headers=headers)
                assert replay.status_code == 200 and replay.json()["id"] == response.json()["id"]
            assert wait_until(lambda: all(desk.notes[t] for t in tickets), timeout=180), desk.notes
            time.sleep(1.0)
            latencies = [desk.notes[t][0]["created_at"] - sent[t] for t in tickets]
            print(f"\ninbound-to-note latency on the demo KB ({len(tickets)} tickets, "
                  "1 worker x 2 processes): "
                  f"median {statistics.median(latencies):.2f}s, max {max(latencies):.2f}s, "
                  f"each {[round(x, 2) for x in latencies]}")
            assert [len(desk.notes[t]) for t in tickets] == [1] * len(tickets)
            assert all(desk.notes[t][0]["public"] is False for t in tickets)
            assert all(tag.startswith("sleuth_") for t in tickets for tag in desk.tags[t])
    finally:
        stack.stop_workers()
        desk.close()

