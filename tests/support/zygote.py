"""`sleuth worker` and `sleuth api` processes for tests, forked from a zygote that has imported what they
import (the Celery app and its tasks, the API app, uvicorn): a worker or server then costs its own work, not
a fresh interpreter's imports. Each is still a real process of its own — its own session and process group,
its environment, argv and log — which a test can kill, and its pool children are its own.

The product's `sleuth up` forks its children the same way (`cli.forking`, whose preload list and child's
start this module uses); the zygote does it for the processes a test starts itself.

The zygote (`python -m tests.support.zygote`, one per test process, started on first use) only imports: no
connection, thread or model is made before a fork. It runs one child per request line on its stdin
(argv, environment, working folder, log file), answers with the child's pid, and reports each child's exit
status and CPU when it reaps it. The heuristics build a zygote has imported (`SLEUTH_COMPILED`) is fixed: a
process asked for with the other build, or any process under `TESTS_CLI=fresh`, starts in a new
interpreter."""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, cast

from cli import forking

ROOT = Path(__file__).resolve().parents[2]

def _compiled(env: Mapping[str, str]) -> bool:
    """Whether a process with `env` runs the compiled heuristics build (the `compiled` setting)."""
    from config.settings import Settings

    return Settings.model_validate({}).engines.compiled if "SLEUTH_COMPILED" not in env else \
        env["SLEUTH_COMPILED"].strip().lower() in ("1", "true", "yes", "on")


# -- the zygote ----------------------------------------------------------------------------------------


def _child(args: list[str], env: dict[str, str], cwd: str, log: str) -> None:
    """The forked child: a session of its own, the request's environment and streams, then `sleuth`."""
    os.setsid()
    os.chdir(cwd)
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    for source, fd in ((null, 0), (out, 1), (out, 2)):
        os.dup2(source, fd)
    os.close(null)
    os.close(out)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own streams
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
    forking.run_sleuth(args, env)


def serve() -> None:
    """Import, then fork one child per request line on stdin until it closes; exits after its children."""
    from investigation import compiled

    compiled.use(_compiled(os.environ))
    forking.preload()  # what the product's `sleuth up` imports before it forks its children
    assert threading.active_count() == 1, f"the zygote must not fork with threads: {threading.enumerate()}"
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    requests = os.fdopen(os.dup(0), "r")
    live: set[int] = set()

    def reap() -> None:
        while live:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            live.discard(pid)
            cpu = usage.ru_utime + usage.ru_stime  # the child's and its reaped children's (pool processes)
            reply.write(f"exit {pid} {os.waitstatus_to_exitcode(status)} {cpu}\n")

    reply.write("ready\n")
    open_ = True
    while open_ or live:
        watched = [requests.fileno(), wake_r] if open_ else [wake_r]
        ready, _, _ = select.select(watched, [], [], 1.0)
        if wake_r in ready:
            os.read(wake_r, 512)
        reap()
        if open_ and requests.fileno() in ready:
            line = requests.readline()
            if not line:
                open_ = False  # the test process is done: the zygote waits for what it started, then ends
                continue
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for fd in (wake_r, wake_w, reply.fileno(), requests.fileno()):
                    os.close(fd)
                _child(request["args"], request["env"], request["cwd"], request["log"])
            live.add(pid)
            reply.write(f"started {pid}\n")


# -- the test process's side ---------------------------------------------------------------------------


class Zygote:
    """The client of one zygote process: starts children, and learns their exit statuses."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.compiled = _compiled(env)
        self._proc = subprocess.Popen([sys.executable, "-m", "tests.support.zygote"], cwd=ROOT, env=dict(env),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._stdin: IO[str] = self._proc.stdin
        self._stdout: IO[str] = self._proc.stdout
        self._lock = threading.Lock()  # one request at a time: its "started" line is the next one read
        self._changed = threading.Condition()
        self._started: list[int] = []
        self.exits: dict[int, int] = {}
        self.cpu = 0.0  # user + system seconds of the children reaped so far
        assert self._stdout.readline() == "ready\n", "the zygote did not start (its stderr says why)"
        threading.Thread(target=self._read, name="zygote-reader", daemon=True).start()

    def _read(self) -> None:
        for line in self._stdout:
            kind, pid, *ended = line.split()
            with self._changed:
                if kind == "started":
                    self._started.append(int(pid))
                else:
                    self.exits[int(pid)] = int(ended[0])
                    self.cpu += float(ended[1])
                self._changed.notify_all()
        with self._changed:  # the zygote is gone: so are the statuses it would have sent
            self._changed.notify_all()

    def spawn(self, args: Sequence[str], env: Mapping[str, str], log: Path) -> ForkedProcess:
        with self._lock, self._changed:
            self._stdin.write(json.dumps({"args": list(args), "env": dict(env), "cwd": os.getcwd(),
                                          "log": str(log)}) + "\n")
            self._stdin.flush()
            assert self._changed.wait_for(lambda: self._started or self._proc.poll() is not None, 60)
            assert self._started, "the zygote ended"
            return ForkedProcess(self, self._started.pop(0), list(args))

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self.exits or self._proc.poll() is not None, timeout)
            return self.exits.get(pid)

    def close(self) -> None:
        self._stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class ForkedProcess(forking.Forked):
    """A process the zygote forked: its exit status comes from the zygote, which reaps it."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str]) -> None:
        super().__init__(pid, args)
        self._zygote = zygote

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.wait(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._zygote.wait(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode


_zygote: Zygote | None = None


def reaped_cpu() -> float:
    """User + system seconds of the processes this test process's zygote has forked and reaped (what
    `resource.getrusage(RUSAGE_CHILDREN)` shows of them only once the zygote itself ends)."""
    return _zygote.cpu if _zygote is not None else 0.0


def spawn_sleuth(args: Sequence[str], env: Mapping[str, str], log: Path | None = None
                 ) -> subprocess.Popen[bytes]:
    """`python -m cli.main *args` with `env`, its output appended to `log` (or discarded), in a session of its
    own: a process forked from the zygote, or a new interpreter when it needs one. A forked one is a
    `ForkedProcess`, typed as the `Popen` whose part it provides (what `stop_group` and the tests use)."""
    global _zygote
    target = log or Path(os.devnull)
    if os.environ.get("TESTS_CLI") != "fresh":
        if _zygote is None:
            _zygote = Zygote(os.environ)
            atexit.register(_zygote.close)  # its children's CPU then counts with this process's children
        if _zygote.compiled == _compiled(env):
            return cast("subprocess.Popen[bytes]", _zygote.spawn(args, env, target))
    with open(target, "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "cli.main", *args], env=dict(env), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


if __name__ == "__main__":
    serve()
