"""`sleuth demo`: ingest the bundled knowledge base, run sample investigations through the queue with a
signed-webhook receiver and a local SMTP sink listening, print cited answers, one-line traces, and the
first answer as the e-mail an agent would get."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console

from app.channels import add_channel, remove_channel, update_allowlist
from bootstrap import Services
from cli import processes, render
from cli.commands import create_and_launch, ingest_summary, run_ingest, wait_for
from cli.mail_sink import MailSink, preview
from cli.tool_services import ToolServices, register_samples
from config.settings import Settings
from investigation.errors import NotFound

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEMO_TENANT = "demo"
DEMO_MAIL = "demo-mail"
AGENT = "agent@example.com"


class _Receiver(BaseHTTPRequestHandler):
    """A helpdesk-side webhook endpoint: verifies the Standard Webhooks signature of each POST."""

    secret: ClassVar[str] = ""
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        from adapters.delivery.webhook import verify

        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            verify(self.secret, dict(self.headers.items()), body)
            ok = True
        except Exception:  # noqa: BLE001 - any failure means "not verified"
            ok = False
        self.received.append({"webhook_id": self.headers.get("webhook-id"), "verified": ok,
                              "id": json.loads(body).get("id")})
        self.send_response(204 if ok else 400)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        return


def _tenant(services: Services, console: Console) -> tuple[str, str]:
    from storage import repositories as repo

    with services.session() as session:
        try:
            tenant = repo.get_tenant_by_name(session, name=DEMO_TENANT)
        except NotFound:
            tenant, key = repo.create_tenant(session, name=DEMO_TENANT, box=services.secret_box())
            console.print(f"created tenant [bold]{DEMO_TENANT}[/bold]; API key (shown once): {key}")
        tenant_id, secret = tenant.id, repo.open_webhook_secret(tenant, services.secret_box())
    # The demo's receivers listen on loopback, which deliveries refuse unless the tenant allows it.
    update_allowlist(services, tenant_id=tenant_id, add=["127.0.0.1"], remove=[])
    return tenant_id, secret


def _mail_channel(services: Services, sink: MailSink) -> None:
    """(Re)create the demo's SMTP channel pointing at this run's sink."""
    from storage import repositories as repo

    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=DEMO_TENANT)
    try:
        remove_channel(services, tenant=tenant, name=DEMO_MAIL)
    except NotFound:
        pass
    add_channel(services, tenant=tenant, data={"name": DEMO_MAIL, "type": "smtp", "host": "127.0.0.1",
                                               "port": sink.port, "from": "sleuth@demo.example.com"})


def run_demo(settings: Settings, *, console: Console) -> None:
    services = Services(settings)
    tenant_id, secret = _tenant(services, console)
    tool_api = ToolServices()  # the tenant's own account/billing, status and tickets APIs, on 127.0.0.1
    tools = register_samples(services, tenant_id, tool_api.base)
    console.print(f"   tools declared: {', '.join(tools)} (examples/tools/, on {tool_api.base})")
    kb = EXAMPLES / "kb"
    console.print(f"[bold]1. ingest[/bold] {kb}")
    report = run_ingest(settings, [kb], DEMO_TENANT, console=console)
    console.print(f"   {ingest_summary(report)}")
    questions = [json.loads(line) for line in (EXAMPLES / "demo_questions.jsonl").read_text().splitlines()
                 if line.strip()]
    _Receiver.secret, _Receiver.received = secret, []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    callback: dict[str, Any] = {"type": "webhook", "url": f"http://127.0.0.1:{server.server_port}/sleuth-hook"}
    sink = MailSink()
    _mail_channel(services, sink)
    # The first cited lookup is also answered by e-mail (a callback list: each delivered exactly once).
    mailed = next((i for i, q in enumerate(questions) if q.get("kind") == "lookup"), 0)
    both: list[dict[str, Any]] = [callback, {"type": "email", "channel": DEMO_MAIL, "to": [AGENT]}]
    console.print("[bold]2. start[/bold] embedded Redis + a Celery worker process (queues: "
                  "plan, retrieve, reduce, llm, deliver, tools)")
    with processes.queue_stack(settings) as live:
        live_services = Services(live)
        console.print(f"[bold]3. investigate[/bold] {len(questions)} questions through the queue")
        ids = [create_and_launch(live_services, DEMO_TENANT, q["question"], "agentic",
                                 both if i == mailed else callback, audience=q.get("audience", "agent"),
                                 context=q.get("context"))
               for i, q in enumerate(questions)]
        for q, inv_id in zip(questions, ids):
            view = wait_for(live_services, inv_id, timeout=300)
            audience = f" · asked for a {q['audience']}" if q.get("audience") else ""
            print(f"\n=== [{q.get('kind', '?')}{audience}] {q['question']}")
            print(render.answer_block(view))
            print(f"-- trace: {render.trace_summary(view)}  (`sleuth trace {inv_id}` opens the trace page)")
        _wait_deliveries(len(ids))
        sink.wait(1)
    server.shutdown()
    sink.close()
    tool_api.close()
    verified = sum(r["verified"] for r in _Receiver.received)
    print(f"\nwebhooks received: {len(_Receiver.received)}, signatures verified: {verified}")
    print(f"e-mails received by the local SMTP sink (127.0.0.1:{sink.port}): {len(sink.messages)}")
    for message in sink.messages[:1]:
        print("--- e-mail to " + AGENT + " ---")
        print(preview(message))
        print("---")


def _wait_deliveries(count: int, timeout: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while len(_Receiver.received) < count and time.monotonic() < deadline:
        time.sleep(0.1)
