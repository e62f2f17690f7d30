"""No secret in any log line: a real `sleuth api` process, a browser-style `?key=sk_…` request, its log."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from api.log_redaction import redact
from tests.support.api_process import api_process
from tests.support.stack import build_stack

pytestmark = pytest.mark.e2e


def test_the_access_log_never_shows_an_api_key(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    log_path = tmp_path / "api.log"
    with api_process(stack.env(), log_path) as base:
        httpx.get(f"{base}/trace/0123456789abcdef?key={stack.api_key}", timeout=10)
        httpx.get(f"{base}/v1/investigations/nope?api_key={stack.api_key}&x=1", timeout=10)
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
