"""Fairness where a step starts (`app.admission_steps`), with a real broker, a real 4-process worker and a
real tool API that holds its answers until the test lets them go: while a lighter tenant is active, the
heavier tenant runs one step at a time and its other steps are parked, then sent again, none lost."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from app import admission_steps as gate
from storage import repositories as repo
from storage.models import Tenant
from tests.support.stack import Stack, build_stack, with_new_tenant
from tests.support.wait import wait_until

QUESTION = "Is there an outage or degraded service in my region right now?"


class HoldingStatusPage:
    """A status-page API that answers nothing until `go` is set; it counts calls per region."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.lock = threading.Lock()
        self.holding: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        page = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                region = parse_qs(urlparse(self.path).query).get("region", ["?"])[0]
                with page.lock:
                    page.holding[region] += 1
                    page.calls[region] += 1
                page.go.wait(timeout=50)
                with page.lock:
                    page.holding[region] -= 1
                body = json.dumps({"region": region, "overall": "operational", "incidents": []}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def held(self, region: str) -> int:
        with self.lock:
            return self.holding[region]

    def close(self) -> None:
        self.go.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def page() -> Iterator[HoldingStatusPage]:
    served = HoldingStatusPage()
    yield served
    served.close()


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str, broker_url: str | None) -> Iterator[Stack]:
    built = build_stack(
        tmp_path / "home", redis_url, redis_prefix, subquery_cache_ttl=0, broker_url=broker_url
    )
    try:
        yield built
    finally:
        built.stop_workers()
        built.services.engine.dispose()


def _status_tool(stack: Stack, tenant_id: str, base: str, **limits: int) -> None:
    import yaml

    from adapters.tools.registry import register
    from cli.tool_services import EXAMPLE_BASE, EXAMPLE_TOOLS

    raw: dict[str, Any] = yaml.safe_load((EXAMPLE_TOOLS / "service_status.yaml").read_text(encoding="utf-8"))
    raw.update(url=str(raw["url"]).replace(EXAMPLE_BASE, base), timeout=55, retries=0, cache_ttl=0)
    with stack.services.session() as session:
        repo.update_allowed_hosts(session, tenant_id=tenant_id, add=["127.0.0.1"])
        tenant = repo.get_tenant(session, tenant_id=tenant_id)
        if limits:
            row = session.get(Tenant, tenant_id)
            assert row is not None
            row.limits = {**(row.limits or {}), **limits}
            session.add(row)
            session.commit()
            tenant = repo.get_tenant(session, tenant_id=tenant_id)
        register(session, stack.settings, tenant=tenant, raw=raw, secret=None)


def _submit(stack: Stack, region: str) -> str:
    from app.intake import parse_request, submit_investigation
    from cli.commands import celery_for
    from tasks import workflow

    app = celery_for(stack.settings)
    with stack.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
    request = parse_request({"question": QUESTION, "audience": "customer",
                             "context": {"attributes": {"region": region}}})
    return submit_investigation(stack.services, tenant=tenant, request=request,
                                launch=lambda i: workflow.launch(app, i), rate_limit=False).id


def test_step_cap_keeps_a_process_free_and_shares_the_rest() -> None:
    assert gate.step_cap(4, 2) == 1  # this machine: 2 workers x 2 processes, two tenants
    assert gate.step_cap(8, 2) == 3
    assert gate.step_cap(16, 3) == 5
    assert gate.step_cap(2, 2) == 1 and gate.step_cap(1, 5) == 1  # a tenant always makes progress
    assert gate.step_cap(0, 2) == 1


# On RabbitMQ too: its quorum queues have no priorities, and this cap is what keeps a burst from starving
# another tenant there (docs/production.md, "Choosing the broker").
@pytest.mark.parametrize("broker_url", ["redis", "rabbitmq"], indirect=True)
def test_a_heavier_tenant_runs_one_step_while_a_lighter_one_is_active(stack: Stack,
                                                                       page: HoldingStatusPage) -> None:
    heavy, light = stack, with_new_tenant(stack)
    _status_tool(heavy, heavy.tenant_id, page.base, max_in_flight=4)
    _status_tool(light, light.tenant_id, page.base)
    # Everything is queued before the worker starts: four starts of `heavy` (all admitted), then one of
    # `light`. Every investigation's first hop calls the status page, which holds each call: a step that
    # calls it occupies its worker process until the test lets the page answer.
    burst = [_submit(heavy, "eu") for _ in range(4)]
    single = _submit(light, "us")
    heavy.start_worker(concurrency=4)

    def settled() -> bool:
        # Without the step cap `heavy`'s calls take every process `light` does not hold (3 of 4); with it,
        # one call of `heavy` is held and the rest of its steps are parked behind it.
        return page.held("eu") >= 2 or (page.held("us") == 1 and page.held("eu") == 1
                                        and gate.parked_count(stack.services, heavy.tenant_id) >= 3)

    assert wait_until(settled, timeout=180), (
        page.holding,
        gate.parked_count(stack.services, heavy.tenant_id),
    )
    assert page.held("eu") == 1, f"heavy holds {page.held('eu')} worker processes while light is active"
    assert gate.running(stack.services, heavy.tenant_id) == 1
    assert gate.parked_count(stack.services, light.tenant_id) == 0

    page.go.set()
    views = {i: heavy.wait(i, timeout=240) for i in [single, *burst]}
    assert all(v["status"] in ("answered", "refused") for v in views.values()), views
    # Every parked step was sent again, once: each investigation called the page exactly once.
    assert page.calls == Counter({"eu": 4, "us": 1})
    assert gate.parked_count(stack.services, heavy.tenant_id) == 0
