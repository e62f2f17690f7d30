"""`sleuth flower` finds a running `sleuth up` (its run file) like `ask` does; off loopback it wants auth."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
from pydantic import SecretStr

from cli.flower import flower_argv, is_loopback, loopback_host
from config.settings import Settings
from tests.support.cli import run_sleuth
from tests.support.http import free_port
from tests.support.zygote import spawn_sleuth


def _get(url: str, timeout: float = 60) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return httpx.get(url, timeout=2)
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def test_flower_argv_requires_auth_off_loopback() -> None:
    settings = Settings()
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("")
    argv, generated = flower_argv(settings, port=5555, address="127.0.0.1", basic_auth=None)
    assert generated is None and not any(a.startswith("--basic-auth") for a in argv)
    argv, generated = flower_argv(settings, port=5555, address="0.0.0.0", basic_auth=None)
    assert generated is not None and f"--basic-auth={generated[0]}:{generated[1]}" in argv
    argv, generated = flower_argv(Settings(flower_basic_auth=SecretStr("ops:pw")), port=1, address="0.0.0.0",
                                  basic_auth=None)
    assert generated is None and "--basic-auth=ops:pw" in argv


def test_flower_finds_a_running_stack_of_the_same_home(tmp_path: Path, redis_url: str,
                                                        redis_prefix: str) -> None:
    home = tmp_path / "home"
    (home / "run").mkdir(parents=True)
    # What `sleuth up` leaves while it runs: its pid (this test process is alive) and its Redis.
    (home / "run" / "up.json").write_text(json.dumps({"pid": os.getpid(), "redis_url": redis_url}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env.update(SLEUTH_HOME=str(home), SLEUTH_REDIS_PREFIX=redis_prefix)
    port = free_port()
    log = tmp_path / "flower.log"
    proc = spawn_sleuth(["flower", "--port", str(port)], env, log)
    try:
        page = _get(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and "Flower" in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert "create_celery needs" not in log.read_text()


def test_flower_without_any_broker_says_what_to_do(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env["SLEUTH_HOME"] = str(tmp_path / "nothing")
    done = run_sleuth(["flower"], env, timeout=60)
    assert done.returncode != 0 and "sleuth up" in done.stderr and "Traceback" not in done.stderr


def test_loopback_host_names() -> None:
    assert all(
        loopback_host(h) for h in ("127.0.0.1", "127.0.0.1:5555", "localhost", "LOCALHOST:80", "[::1]:5555")
    )
    assert not any(
        loopback_host(h)
        for h in (
            "evil.example",
            "evil.example:5555",
            "127.0.0.1.evil.example",
            "localhost.evil.example:5555",
            "10.0.0.1:5555",
            "",
            "127.0.0.1:",
        )
    )


def test_flower_on_loopback_refuses_a_foreign_host_header(tmp_path: Path, redis_url: str,
                                                          redis_prefix: str) -> None:
    """DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 reaches the port, but its
    requests carry `Host: evil.example:PORT`, and Flower (no password on loopback) must not answer them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env.update(
        SLEUTH_HOME=str(tmp_path / "home"), SLEUTH_REDIS_URL=redis_url, SLEUTH_REDIS_PREFIX=redis_prefix
    )
    port = free_port()
    proc = spawn_sleuth(["flower", "--port", str(port)], env)
    base = f"http://127.0.0.1:{port}"
    try:
        assert _get(f"{base}/").status_code == 200  # Host: 127.0.0.1:PORT
        for path in ("/", "/api/workers", "/healthcheck"):
            foreign = httpx.get(f"{base}{path}", headers={"Host": f"evil.example:{port}"}, timeout=10)
            assert foreign.status_code == 403, path
            assert "Flower" not in foreign.text
        assert httpx.get(f"{base}/", headers={"Host": f"localhost:{port}"}, timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=20)
