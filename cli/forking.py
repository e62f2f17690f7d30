"""Sleuth's processes started by forking one that has already imported what they import.

A fresh interpreter for a worker, the API or beat spends about three seconds of CPU importing Celery,
FastAPI, the heuristics and the tasks before its first task or request; `sleuth up` pays that once
(`preload`), then forks each child (`spawn`), and a killed worker is back in a fraction of a second. Each
child is still a process of its own: its own session and process group, its environment and argv, its
output, the file descriptors open when the imports were done and no others.

Forking is safe only from a process that runs no other thread; `spawn` falls back to a new interpreter when
one runs (and whenever `preload` was not called), so a caller never has to know which it got.
"""

from __future__ import annotations

import importlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn, cast

from setproctitle import setproctitle

from config.settings import get_settings

ROOT = Path(__file__).resolve().parents[1]

# What a worker and an API process import by their first task or request (`python -X importtime` of one),
# pool processes' imports included: they inherit what their worker has imported.
PRELOAD = ("cli.main", "cli.process_commands", "workers.app", "workers.runtime", "tasks.celery_tasks",
           "tasks.steps", "tasks.delivery_step", "app.source_sync", "app.sources", "storage.retention",
           "api.app", "uvicorn", "observability.metrics", "celery.bin.celery", "celery.apps.worker",
           "celery.worker.consumer", "celery.concurrency.prefork", "billiard.pool", "billiard.sharedctypes",
           "billiard.synchronize", "billiard.popen_fork", "kombu.transport.redis", "kombu.matcher",
           "kombu.pidbox", "threadpoolctl", "cffi.cparser")

_kept_fds: frozenset[int] | None = None  # open once the imports were done: what a forked child keeps


def _open_fds() -> frozenset[int]:
    """The descriptors open in this process (not the one the listing itself used, closed by now)."""
    listed = [int(name) for name in os.listdir("/proc/self/fd")]
    return frozenset(fd for fd in listed if _is_open(fd))


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def preload() -> None:
    """Import what Sleuth's processes import, so that `spawn` can fork them. Call it before opening any
    connection a child must not share: what is open now is what every child keeps."""
    global _kept_fds
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # a child that needs it imports it, and reports its absence, itself
            continue
    _kept_fds = _open_fds() if Path("/proc/self/fd").is_dir() else None


def can_fork() -> bool:
    return _kept_fds is not None and threading.active_count() == 1


def run_sleuth(args: Sequence[str], env: Mapping[str, str]) -> NoReturn:
    """In a freshly forked child: become `python -m cli.main *args` with `env` and exit with its status.
    The caller has set up the session and the standard streams."""
    # `ps` shows what this child is, not the parent's command (before the environment changes: the title
    # takes the room of the original argv and environment).
    setproctitle(" ".join(["sleuth", *args]))
    os.environ.clear()
    os.environ.update(env)
    get_settings.cache_clear()  # the parent's settings were read from the parent's environment
    random.seed()
    sys.argv = [str(ROOT / "cli" / "main.py"), *args]
    code = 0
    try:
        from cli.main import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported like an uncaught exception, exit status 1
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    os._exit(code)


def _child(args: Sequence[str], env: Mapping[str, str], quiet: bool, keep: frozenset[int]) -> NoReturn:
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)  # the parent's handlers (`up` stops on SIGTERM) are not ours
        if quiet:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.close(null)
        for fd in _open_fds() - keep - {0, 1, 2}:
            try:
                os.close(fd)  # the parent's connections and pipes
            except OSError:
                pass
    except BaseException:  # noqa: BLE001 - never return into the parent's code
        traceback.print_exc()
        os._exit(1)
    run_sleuth(args, env)


class Forked:
    """What the supervisor and `stop_group` use of `subprocess.Popen`, for a child this process forked."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                self.returncode = -signal.SIGKILL
                return self.returncode
            if pid != 0:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def spawn(args: Sequence[str], env: Mapping[str, str], *, quiet: bool = True) -> subprocess.Popen[bytes]:
    """`python -m cli.main *args` with `env` in a session of its own, output discarded when `quiet`: forked
    from this process when it preloaded and runs one thread, a new interpreter otherwise. A forked one is a
    `Forked`, typed as the `Popen` whose part it provides."""
    if not can_fork():
        out = subprocess.DEVNULL if quiet else None
        return subprocess.Popen([sys.executable, "-m", "cli.main", *args], env=dict(env), stdout=out,
                                stderr=out, start_new_session=True)
    assert _kept_fds is not None
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # or the child would write the parent's buffered output again
    pid = os.fork()
    if pid == 0:
        _child(args, env, quiet, _kept_fds)
    return cast("subprocess.Popen[bytes]", Forked(pid, list(args)))


__all__ = ["PRELOAD", "Forked", "can_fork", "preload", "run_sleuth", "spawn"]
