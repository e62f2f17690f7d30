"""`sleuth worker` and `sleuth up` refuse a SLEUTH_BROKER_URL of an unknown scheme or whose host does not
answer: exit 2 with one line naming the variable and the host, no traceback, nothing started."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_sleuth


def sleuth(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    full_env.update({"SLEUTH_HOME": str(home), **env})
    return run_sleuth(args, full_env, timeout=60)


def _closed_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])


@pytest.mark.parametrize(("command", "url", "host"), [
    (("worker",), "kafka://queue.example:9092", "queue.example:9092"),
    (("up", "--port", "0"), "amqp://guest:guest@127.0.0.1:{port}/", "127.0.0.1:{port}"),
])
def test_a_bad_broker_url_stops_the_command_with_a_message_naming_it(tmp_path: Path, command: tuple[str, ...],
                                                                     url: str, host: str) -> None:
    port = _closed_port()
    done = sleuth(tmp_path / "home", *command, SLEUTH_BROKER_URL=url.format(port=port))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "SLEUTH_BROKER_URL" in done.stderr and host.format(port=port) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "home" / "run" / "up.json").exists()
