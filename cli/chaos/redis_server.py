"""A redis-server of the scenario's own, reached by the stack as an external `SLEUTH_REDIS_URL` (what
production runs), with the append-only file on: the scenario SIGKILLs it and starts it again on the same
port and directory, as a restarted Redis service would be."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import redis

from cli.chaos.harness import free_port
from workers.embedded_redis import server_binary


def _binary() -> str:
    return str(server_binary())  # the embedded default's server: the scenario restarts what users run


class RedisServer:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 15.0) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        args = [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir.resolve()),
                "--appendonly", "yes", "--save", "", "--daemonize", "no",
                "--logfile", str((self.dir / "redis.log").resolve())]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited; see {self.dir / 'redis.log'}")
            try:
                if redis.Redis(port=self.port, socket_timeout=0.5).ping():
                    return
            except (redis.RedisError, OSError):
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer in time")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def restart(self, down_s: float) -> float:
        """SIGKILL, stay down `down_s` seconds, start again (the AOF is replayed): seconds until it
        answers."""
        self.kill()
        killed = time.monotonic()
        time.sleep(down_s)
        self.start()
        return round(time.monotonic() - killed, 1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
