"""The `sleuth` command as a newcomer uses it: tenants, ingest, ask (self-starting embedded stack), up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

KB = Path(__file__).resolve().parents[2] / "examples" / "kb"


def sleuth(home: Path, *args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    full_env.update({"SLEUTH_HOME": str(home), **env})
    return subprocess.run([sys.executable, "-m", "cli.main", *args], env=full_env, capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, embeddings_dir: Path) -> Path:
    home = tmp_path_factory.mktemp("cli") / "home"
    created = sleuth(home, "tenants", "create", "acme", "--json")
    assert created.returncode == 0, created.stderr
    info = json.loads(created.stdout)
    assert info["api_key"].startswith("sk_") and info["webhook_secret"].startswith("whsec_")
    (home / "tenant.json").write_text(created.stdout)
    ingested = sleuth(home, "ingest", str(KB), "--tenant", "acme", "--json",
                      SLEUTH_EMBEDDINGS_DIR=str(embeddings_dir))  # the KB's vectors, computed once per run
    assert ingested.returncode == 0, ingested.stderr
    report = json.loads(ingested.stdout)
    assert report["documents"] >= 40 and report["new"] == report["documents"]
    assert report["chunks_written"] >= report["documents"]
    return home


def test_duplicate_tenant_and_bad_ingest_are_clear_errors(home: Path, tmp_path: Path) -> None:
    dup = sleuth(home, "tenants", "create", "acme")
    assert dup.returncode != 0 and "name" in dup.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x1", "title": "ok", "text": "fine"}\n{"id": "x2", "title": "no text"}\n')
    failed = sleuth(home, "ingest", str(bad), "--tenant", "acme")
    assert failed.returncode != 0 and "bad.jsonl:2" in failed.stderr and "text" in failed.stderr
    again = sleuth(home, "ingest", str(KB), "--tenant", "acme")  # nothing changed: nothing written
    assert again.returncode == 0, again.stderr
    assert "0 new, 0 changed" in again.stdout and "unchanged; nothing to index" in again.stdout, again.stdout
    assert "\n" not in again.stdout.strip()  # one line, never wrapped when piped
    missing = sleuth(home, "ingest", str(KB), "--tenant", "nobody")
    assert missing.returncode != 0


def test_ask_with_nothing_running_answers_in_process(home: Path) -> None:
    done = sleuth(home, "ask", "What does error ERR_4030 mean?", "--tenant", "acme")
    assert done.returncode == 0, done.stderr
    assert "running the steps in this process" in done.stderr
    assert "Sources:" in done.stdout and "error-codes-reference" in done.stdout
    assert "{" not in done.stdout.splitlines()[0]  # an answer, not a dict
    assert not (home / "run" / "redis.sock").exists()
    greeting = sleuth(home, "ask", "Good morning!", "--tenant", "acme")  # done before the model loads
    assert greeting.returncode == 0 and "terminate called" not in greeting.stderr, greeting.stderr
    # piped: the >80-column notice stays on one line (no wrapping mid-phrase)
    assert any(line.startswith("no broker") and line.endswith("to go through Celery)")
               for line in done.stderr.splitlines()), done.stderr


def test_ask_starts_its_own_embedded_stack(home: Path) -> None:
    done = sleuth(home, "ask", "What does error ERR_4030 mean?", "--tenant", "acme", "--json",
                  "--executor", "queue")
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["status"] == "answered" and view["citations"]
    assert "error-codes-reference" in {c["source_id"] for c in view["citations"]}
    assert not (home / "run" / "redis.sock").exists()  # the stack it started is gone again


def test_up_serves_the_api_and_stops_cleanly_on_ctrl_c(home: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env["SLEUTH_HOME"] = str(home)
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "up", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    key = json.loads((home / "tenant.json").read_text())["api_key"]
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        ready = False
        while time.monotonic() < deadline and not ready:
            try:
                ready = httpx.get(base + "/readyz", timeout=2).status_code == 200
            except httpx.HTTPError:
                time.sleep(0.3)
        assert ready, "sleuth up never became ready"
        auth = {"Authorization": f"Bearer {key}"}
        posted = httpx.post(base + "/v1/investigations", json={"question": "Which plans include SAML SSO?"},
                            headers=auth)
        assert posted.status_code == 202, posted.text
        inv_id = posted.json()["id"]
        status = "queued"
        while time.monotonic() < deadline and status in ("queued", "running"):
            status = httpx.get(f"{base}/v1/investigations/{inv_id}", headers=auth).json()["status"]
            time.sleep(0.2)
        assert status == "answered"
        # a second CLI call finds the running stack instead of starting its own
        asked = sleuth(home, "ask", "hello!", "--tenant", "acme", "--json")
        assert asked.returncode == 0, asked.stderr
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 3  # redis-server, API, worker (+ its pool)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    assert proc.returncode == 0
    time.sleep(0.5)
    assert all(not c.is_running() or c.status() == psutil.STATUS_ZOMBIE for c in children)
    assert not (home / "run" / "up.json").exists()
