"""schemathesis against a real `sleuth api` process: 0 server errors, 0 undocumented responses, every
response body as its schema says (the full run is `sleuth chaos --scenario schemathesis`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.api_process import api_process
from tests.support.stack import build_stack

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


def test_schemathesis_finds_no_server_error_and_no_undocumented_response(
        tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    with api_process(stack.env(), tmp_path / "api.log") as base:
        run = subprocess.run(
            [str(Path(sys.executable).parent / "schemathesis"), "run", f"{base}/openapi.json",
             "-H", f"Authorization: Bearer {stack.api_key}", "--checks", CHECKS, "--phases", "fuzzing",
             "-n", "2", "--seed", "1"],
            capture_output=True, text=True, timeout=400, check=False)
    assert run.returncode == 0, run.stdout[-4000:]
    assert " passed" in run.stdout and "failed" not in run.stdout.split("SUMMARY")[-1]
