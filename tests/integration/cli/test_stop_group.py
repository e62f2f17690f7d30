"""Stopping a worker process group is a warm shutdown: a task running in a prefork child finishes.

SIGTERM to the whole group would reach the busy pool child, which dies at once (Celery resets SIGTERM to
the default there): the task is cut off mid-run and the parent logs WorkerLostError. A real Celery worker
on the test Redis shows it; the test releases the task only once the worker has begun its warm shutdown."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from cli.supervisor import stop_group
from tests.support.blocking_worker import make_app
from tests.support.wait import wait_until

ROOT = Path(__file__).resolve().parents[3]


def test_stopping_a_worker_lets_its_running_task_finish(tmp_path: Path, redis_url: str,
                                                        redis_prefix: str) -> None:
    queue = f"blocking-{uuid.uuid4().hex[:8]}"
    log_path = tmp_path / "worker.log"
    env = {**os.environ, "BLOCKING_BROKER_URL": redis_url, "BLOCKING_PREFIX": redis_prefix}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "tests.support.blocking_worker",
                "worker",
                "-Q",
                queue,
                "--concurrency",
                "1",
                "--pool",
                "prefork",
                "--loglevel",
                "INFO",
                "-n",
                f"{queue}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    stopper: threading.Thread | None = None
    try:
        make_app(redis_url, redis_prefix).send_task("blocking.hold", args=[str(tmp_path)], queue=queue)
        assert wait_until(lambda: (tmp_path / "started").exists(), timeout=90), "the task never started"
        stopper = threading.Thread(target=stop_group, args=(proc,), kwargs={"timeout": 60})
        stopper.start()
        assert wait_until(lambda: b"Warm shutdown" in log_path.read_bytes(), timeout=30), log_path.read_text()
        assert not (tmp_path / "done").exists()
        (tmp_path / "release").touch()
        stopper.join(timeout=90)
        assert not stopper.is_alive()
    finally:
        if stopper is None:
            stop_group(proc, timeout=10)
    output = log_path.read_text()
    assert (tmp_path / "done").exists(), output
    assert "WorkerLostError" not in output and "Traceback" not in output, output
    assert proc.returncode == 0, output
