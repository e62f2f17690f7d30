"""No secret in any log line: a real `sleuth api` process, a browser-style `?key=sk_…` request, its log."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from api.log_redaction import redact
from tests.integration.tasks.conftest import build_stack
from tests.support.http import free_port

pytestmark = pytest.mark.e2e


def test_the_access_log_never_shows_an_api_key(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    port = free_port()
    log_path = tmp_path / "api.log"
    with open(log_path, "wb") as log:
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
                assert time.monotonic() < deadline and api.poll() is None, log_path.read_text()
                time.sleep(0.2)
        httpx.get(f"{base}/trace/0123456789abcdef?key={stack.api_key}", timeout=10)
        httpx.get(f"{base}/v1/investigations/nope?api_key={stack.api_key}&x=1", timeout=10)
    finally:
        api.terminate()
        api.wait(15)
    text = log_path.read_text()
    assert "GET /trace/0123456789abcdef?key=***" in text  # the line is there, the key is not
    assert stack.api_key not in text and stack.api_key[3:] not in text
    assert "api_key=***&x=1" in text


@pytest.mark.parametrize(("line", "expected"), [
    ('127.0.0.1 - "GET /trace/a?key=sk_abcdefghijk HTTP/1.1" 200', '127.0.0.1 - "GET /trace/a?key=*** HTTP/1.1" 200'),
    ("signing with whsec_c2VjcmV0c2VjcmV0", "signing with whsec_***"),
    ("Authorization: Bearer sk_abcdefghij", "Authorization: Bearer sk_***"),
    ("Authorization: Bearer abcdefghij", "Authorization: Bearer ***"),
    ("nothing secret here: key=value in prose", "nothing secret here: key=value in prose"),
])
def test_redact(line: str, expected: str) -> None:
    assert redact(line) == expected
