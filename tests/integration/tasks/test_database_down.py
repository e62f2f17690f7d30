"""The database goes away under a running worker: its steps are retried, not failed, and the investigation
finishes once the database is back (real PostgreSQL behind a TCP proxy that is stopped, a real worker)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import make_url

from cli.chaos.proxy import TcpProxy
from tests.support.stack import Stack, build_stack
from tests.support.wait import wait_until
from workers import names

pytestmark = pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)


@pytest.fixture()
def proxy(db_url: str) -> Iterator[TcpProxy]:
    url = make_url(db_url)
    running = TcpProxy(url.host or "127.0.0.1", url.port or 5432)
    yield running
    running.close()


@pytest.fixture()
def stack(tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str, proxy: TcpProxy) -> Iterator[Stack]:
    through_proxy = (
        make_url(db_url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    )
    built = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=through_proxy)
    try:
        yield built
    finally:
        proxy.up()
        built.stop_workers()
        built.services.engine.dispose()


def test_a_step_that_finds_the_database_gone_is_retried_and_the_investigation_finishes(
        stack: Stack, proxy: TcpProxy) -> None:
    from workers.app import create_celery

    inv_id = stack.persisted("Which plan includes SCIM provisioning?")
    stack.start_worker()
    stack.wait_ready()
    proxy.down()  # the database is unreachable: refused, existing connections reset
    app = create_celery(stack.settings)
    # Sent asking for its states in the result backend (a step stores none in production), to see the RETRY.
    task_id = app.send_task(names.T_START, args=(inv_id,), ignore_result=False).id
    # The outage lasts until the worker has tried the step and scheduled it again (no sleep, no timing).
    assert wait_until(lambda: app.backend.get_task_meta(task_id)["status"] == "RETRY", timeout=60)
    proxy.up()
    view = stack.wait(inv_id, timeout=120)
    assert view["status"] == "answered", view
    assert view["stop_reason"] != "error"
