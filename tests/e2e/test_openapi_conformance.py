"""schemathesis against a real `sleuth api` process: 0 server errors, 0 undocumented responses, every
response body as its schema says (the full run is `sleuth chaos --scenario schemathesis`)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.tasks.conftest import build_stack
from tests.support.http import free_port

pytestmark = pytest.mark.e2e

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


def test_schemathesis_finds_no_server_error_and_no_undocumented_response(
        tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    port = free_port()
    with open(tmp_path / "api.log", "wb") as log:
        api = subprocess.Popen([sys.executable, "-m", "cli.main", "api", "--port", str(port)], env=stack.env(),
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and api.poll() is None
                time.sleep(0.2)
        run = subprocess.run(
            [str(Path(sys.executable).parent / "schemathesis"), "run", f"{base}/openapi.json",
             "-H", f"Authorization: Bearer {stack.api_key}", "--checks", CHECKS, "--phases", "fuzzing",
             "-n", "2", "--seed", "1"],
            capture_output=True, text=True, timeout=400, check=False)
    finally:
        api.terminate()
        api.wait(15)
    assert run.returncode == 0, run.stdout[-4000:]
    assert " passed" in run.stdout and "failed" not in run.stdout.split("SUMMARY")[-1]
