"""No secret in any log line: a real `sleuth api` process, a browser-style `?key=sk_…` request, a sign-in
link printed by a real `sleuth trace` and opened (twice), rating-style token paths — and its log."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from api.log_redaction import redact
from tests.support.api_process import api_process
from tests.support.cli import run_sleuth
from tests.support.stack import build_stack


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


def test_a_sign_in_link_never_reaches_the_access_log(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    inv_id = stack.asked("Which plan includes SCIM provisioning?")
    log_path = tmp_path / "api.log"
    with api_process(stack.env(), log_path) as base:
        printed = run_sleuth(["trace", inv_id, "--base-url", base], stack.env(), timeout=120)
        assert printed.returncode == 0, printed.stderr
        link = printed.stdout.strip()
        assert link.startswith(f"{base}/link/"), printed.stdout + printed.stderr
        first = httpx.get(link, follow_redirects=False, timeout=10)
        assert first.status_code == 303 and first.headers["location"] == f"/trace/{inv_id}"
        assert httpx.get(link, follow_redirects=False, timeout=10).status_code == 401  # single use
        httpx.get(f"{base}/r/rating-token-abcdef123456?score=1", timeout=10)
        httpx.get(f"{base}/feedback/feedback-token-abcdef123456/up", timeout=10)
        httpx.get(f"{base}/trace/{inv_id}?token=query-token-abcdef123456", timeout=10)
    text = log_path.read_text()
    token = link.rsplit("/", 1)[1]
    text = text.replace('\\"', '"')  # the log is JSON lines: the access line's quotes are escaped
    assert '"GET /link/*** HTTP/1.1" 303' in text and '"GET /link/*** HTTP/1.1" 401' in text
    for secret in (token, token[:24], token[-24:], "rating-token-abcdef123456", "feedback-token-abcdef123456",
                   "query-token-abcdef123456"):
        assert secret not in text, secret
    assert "/r/***?score=1" in text and "/feedback/***/up" in text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            '127.0.0.1 - "GET /trace/a?key=sk_abcdefghijk HTTP/1.1" 200',
            '127.0.0.1 - "GET /trace/a?key=*** HTTP/1.1" 200',
        ),
        ("signing with whsec_c2VjcmV0c2VjcmV0", "signing with whsec_***"),
        ("Authorization: Bearer sk_abcdefghij", "Authorization: Bearer sk_***"),
        ("Authorization: Bearer abcdefghij", "Authorization: Bearer ***"),
        ("nothing secret here: key=value in prose", "nothing secret here: key=value in prose"),
        ('"GET /link/eyJ0Ijo.aGVsbG8-_x HTTP/1.1" 303', '"GET /link/*** HTTP/1.1" 303'),
        ('"GET /r/abc123?score=1 HTTP/1.1" 200', '"GET /r/***?score=1 HTTP/1.1" 200'),
        ('"POST /feedback/abc123/up HTTP/1.1" 200', '"POST /feedback/***/up HTTP/1.1" 200'),
        ('"GET /trace/a?x=1&token=t0k3n HTTP/1.1" 200', '"GET /trace/a?x=1&token=*** HTTP/1.1" 200'),
    ],
)
def test_redact(line: str, expected: str) -> None:
    assert redact(line) == expected
