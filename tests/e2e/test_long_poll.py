"""Long polling on a real `sleuth api` process: a request waiting on an unfinished investigation is answered
when the server is told to stop, instead of holding the shutdown for the rest of its wait."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import httpx
import psutil

from tests.support.api_process import api_process
from tests.support.stack import build_stack
from tests.support.wait import wait_until


def _api_pid(base: str) -> int:
    """The process listening on `base`'s port (this test's `sleuth api`)."""
    port = int(base.rsplit(":", 1)[1])
    return int(next(c.pid for c in psutil.net_connections("tcp")
                    if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid))


def test_a_stopping_api_answers_the_requests_waiting_on_an_investigation(
        tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    headers = {"Authorization": f"Bearer {stack.api_key}"}
    log_path = tmp_path / "api.log"
    with api_process(stack.env(SLEUTH_LOG_LEVEL="DEBUG"), log_path) as base:
        created = httpx.post(f"{base}/v1/investigations", json={"question": "Which plan includes SSO?"},
                             headers=headers, timeout=30)
        assert created.status_code == 202, created.text
        inv_id = created.json()["id"]  # no worker runs: it stays queued
        answers: list[Any] = []

        def wait_for_it() -> None:
            try:  # a client timeout under the wait: without the shutdown ending it, this fails
                answers.append(httpx.get(f"{base}/v1/investigations/{inv_id}", params={"wait": 30},
                                         headers=headers, timeout=20))
            except httpx.HTTPError as exc:
                answers.append(exc)

        waiting = threading.Thread(target=wait_for_it)
        waiting.start()
        # Stopped once the request waits (the API logs it at DEBUG).
        pid = _api_pid(base)
        assert wait_until(lambda: f"for investigation {inv_id}" in log_path.read_text(errors="replace")
                          or bool(answers), timeout=20, interval=0.05)
        os.kill(pid, signal.SIGTERM)
        waiting.join(30)
    assert len(answers) == 1 and isinstance(answers[0], httpx.Response), answers
    assert answers[0].status_code == 200 and answers[0].json()["status"] == "queued"
