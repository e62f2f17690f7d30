"""`cli.forking`: `sleuth up`'s children forked from a process that preloaded their imports.

The forking process must run one thread, so the scenario runs in a fresh interpreter of its own (a pytest
worker runs several) and reports what it saw as JSON."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCENARIO = r"""
import json, os, signal, socket, subprocess, sys, threading, time, urllib.request
from cli import forking
from config.settings import get_settings

parent_home, child_home, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
report = {"before_preload": forking.can_fork()}
forking.preload()
report["after_preload"] = forking.can_fork()
signal.signal(signal.SIGTERM, lambda *_: None)  # the parent's handler (`up` stops on SIGTERM)
assert str(get_settings().home) == parent_home  # cached in the parent, from the parent's environment
leak = socket.socket()
leak.bind(("127.0.0.1", 0))  # opened after the imports: no child may hold it
env = {**os.environ, "SLEUTH_HOME": child_home}

bad = forking.spawn(["--no-such-option"], env)
report["bad"] = [type(bad).__name__, bad.wait(timeout=60)]

api = forking.spawn(["api", "--host", "127.0.0.1", "--port", str(port)], env)
deadline = time.monotonic() + 60
while True:
    try:
        report["healthz"] = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).status
        break
    except OSError:
        assert api.poll() is None and time.monotonic() < deadline, "the forked API never answered"
        time.sleep(0.1)
report["own_session"] = os.getsid(api.pid) == api.pid and os.getpgid(api.pid) == api.pid
report["title"] = open(f"/proc/{api.pid}/cmdline").read().replace("\0", " ").strip()
leaked = f"socket:[{os.fstat(leak.fileno()).st_ino}]"
def target(fd):  # the child opens and closes descriptors as it serves: one listed may be gone when read
    try:
        return os.readlink(f"/proc/{api.pid}/fd/{fd}")
    except FileNotFoundError:
        return None
report["holds_leak"] = any(target(fd) == leaked for fd in os.listdir(f"/proc/{api.pid}/fd"))
try:
    api.wait(timeout=0.2)
    report["wait_timeout"] = False
except subprocess.TimeoutExpired:
    report["wait_timeout"] = True
api.terminate()
report["api_exit"] = api.wait(timeout=60)

killed = forking.spawn(["api", "--host", "127.0.0.1", "--port", "0"], env)
killed.kill()
report["killed_exit"] = killed.wait(timeout=60)

threading.Thread(target=time.sleep, args=(3,), daemon=True).start()
report["with_a_thread"] = forking.can_fork()
fresh = forking.spawn(["--no-such-option"], env)
report["fresh"] = [type(fresh).__name__, fresh.wait(timeout=60)]
print(json.dumps(report))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_children_are_forked_with_their_own_session_environment_title_and_descriptors(tmp_path: Path) -> None:
    parent_home, child_home = tmp_path / "parent", tmp_path / "child"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env.update(SLEUTH_HOME=str(parent_home), SLEUTH_WORKER_WARM_UP="false")
    args = [str(parent_home), str(child_home), str(_free_port())]
    run = subprocess.run([sys.executable, "-c", SCENARIO, *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["before_preload"] is False and report["after_preload"] is True
    assert report["bad"] == ["Forked", 2]  # a usage error: the child's own exit status
    assert report["healthz"] == 200
    assert report["own_session"] is True
    assert report["title"].startswith("sleuth api --host 127.0.0.1")
    assert report["holds_leak"] is False
    assert report["wait_timeout"] is True
    # uvicorn shuts down on SIGTERM, then raises it again under the handler it found at start: the default
    # one (the status -15), not the parent's (which would have swallowed it: status 0)
    assert report["api_exit"] == -15
    assert report["killed_exit"] == -9
    # the child read its own environment, not the parent's cached settings
    assert (child_home / "run").is_dir() and not parent_home.exists()
    # with a second thread running, forking is unsafe: a new interpreter instead
    assert report["with_a_thread"] is False and report["fresh"] == ["Popen", 2]
