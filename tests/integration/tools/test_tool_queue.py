"""Through the real queue: a hop's tool call is a chord member on the `tools` queue, consumed by a worker
of its own; the document workers never run it, and the answer cites the tool."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cli.tool_services import ToolServices
from tests.integration.tools.conftest import DANA, build, tool_events
from tests.support.zygote import spawn_sleuth


def worker(home: Path, env: dict[str, str], queues: str, name: str) -> subprocess.Popen[bytes]:
    args = ["worker", "-Q", queues, "--concurrency", "1", "--name", name, "--loglevel", "WARNING"]
    return spawn_sleuth(args, env, home / f"worker-{name}.log")


def test_tool_calls_run_on_their_own_queue(tmp_path: Path, redis_url: str, redis_prefix: str,
                                           api: ToolServices) -> None:
    from app.intake import parse_request, submit_investigation
    from cli.commands import celery_for, wait_for
    from cli.processes import wait_for_workers
    from cli.supervisor import stop_group
    from storage import repositories as repo
    from tasks import workflow

    api.reset()
    stack = build(tmp_path / "home", redis_url, redis_prefix, api)
    settings = stack.services.settings
    env = {**os.environ, **settings.as_env()}
    home = settings.home
    procs = [worker(home, env, "plan,retrieve,reduce,llm,deliver", "docs"),
             worker(home, env, "tools", "toolsonly")]
    try:
        assert settings.redis_url
        wait_for_workers(settings, settings.redis_url, count=2, timeout=90)
        app = celery_for(settings)
        with stack.services.session() as session:
            tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
        request = parse_request({"question": "Why is my workspace read-only?", "context": DANA,
                                 "audience": "customer"})
        inv_id = submit_investigation(stack.services, tenant=tenant, request=request,
                                      launch=lambda i: workflow.launch(app, i)).id
        view = wait_for(stack.services, inv_id, timeout=120)
        assert view["status"] == "answered", view
        assert any(str(c["source_id"]).startswith("tool:billing_account") for c in view["citations"])
        full = stack.view(inv_id)
        assert [c["tool"] for c in tool_events(full)] == ["billing_account"]
    finally:
        for proc in procs:
            stop_group(proc, timeout=10)
    tools_log = (home / "worker-toolsonly.log").read_text()
    docs_log = (home / "worker-docs.log").read_text()
    assert "Traceback" not in tools_log + docs_log
