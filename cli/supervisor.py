"""`sleuth up`'s supervisor: keeps each child (embedded Redis, API, beat, workers) running.

A child that exits is cleaned up with its whole process group (a Celery worker's pool children, an embedded
beat) and restarted after an exponential backoff. A child that keeps dying — more than `give_up_after`
exits within `window` seconds — is reported and left stopped instead of being restarted in a tight loop;
the rest of the stack keeps running. Only `stop()` (Ctrl-C / SIGTERM in `sleuth up`) stops everything.

Time comes from an injected clock, so tests step it instead of sleeping.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

Clock = Callable[[], float]
Report = Callable[[str], None]


@dataclass(frozen=True)
class RestartPolicy:
    """Backoff between restarts, and when to give up on a child that keeps dying."""

    base_delay: float = 1.0  # first restart waits this long; doubles on each further failure
    max_delay: float = 30.0
    give_up_after: int = 5  # exits within `window` seconds tolerated; one more and the child stays down
    window: float = 120.0
    stable_after: float = 60.0  # a child up this long has its failure history forgotten

    def delay(self, failures: int) -> float:
        return float(min(self.max_delay, self.base_delay * 2 ** max(0, failures - 1)))


@dataclass
class Child:
    """One supervised process. `start` returns a process that leads its own session (process group)."""

    name: str
    start: Callable[[], subprocess.Popen[bytes]]
    stop: Callable[[subprocess.Popen[bytes]], None] | None = None
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    exits: list[float] = field(default_factory=list)
    next_start: float | None = None
    given_up: bool = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    @property
    def state(self) -> str:
        if self.given_up:
            return "failed"
        if self.pid is not None:
            return "running"
        return "restarting" if self.next_start is not None else "stopped"


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal every process of the group `pid` leads (children start with `start_new_session=True`)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_group(proc: subprocess.Popen[bytes], *, timeout: float = 15.0) -> None:
    """Warm shutdown, then SIGKILL what is left of the group after `timeout`.

    SIGTERM goes to the leader only: a Celery worker then finishes its current task and stops its own
    pool. Sent to the whole group it would reach a busy prefork child too, which dies at once on SIGTERM
    (Celery resets it to the default there): the task is lost mid-run and the parent logs WorkerLostError.
    """
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    kill_group(proc.pid, signal.SIGKILL)  # a hung leader, and stragglers of a group whose leader is gone
    if proc.poll() is None:
        proc.wait(timeout=5)


class Supervisor:
    """Starts children in order, restarts the ones that die (`tick`), stops them in reverse order."""

    def __init__(self, children: Sequence[Child], *, policy: RestartPolicy | None = None,
                 clock: Clock = time.monotonic, report: Report = print,
                 on_change: Callable[[Supervisor], None] | None = None) -> None:
        self.children = list(children)
        self.policy = policy or RestartPolicy()
        self.clock = clock
        self.report = report
        self.on_change = on_change

    def start(self) -> None:
        for child in self.children:
            self._launch(child)
        self._changed()

    def tick(self) -> None:
        """Notice exits and run due restarts; call it a few times a second."""
        now = self.clock()
        changed = False
        for child in self.children:
            if child.given_up:
                continue
            if child.proc is not None and child.proc.poll() is not None:
                self._exited(child, now)
                changed = True
            elif child.proc is None and child.next_start is not None and now >= child.next_start:
                child.restarts += 1
                self._launch(child)
                self.report(f"{child.name} restarted (pid {child.pid}, restart #{child.restarts})")
                changed = True
            elif (
                child.proc is not None and child.exits and now - child.started_at >= self.policy.stable_after
            ):
                child.exits.clear()  # it has been up long enough: the next exit starts a fresh backoff
        if changed:
            self._changed()

    def stop(self) -> None:
        for child in reversed(self.children):
            child.next_start = None
            if child.proc is not None:
                (child.stop or stop_group)(child.proc)
        self._changed()

    def status(self) -> dict[str, dict[str, object]]:
        return {c.name: {"pid": c.pid, "state": c.state, "restarts": c.restarts} for c in self.children}

    # -- internals ----------------------------------------------------------------------------------

    def _launch(self, child: Child) -> None:
        child.next_start = None
        child.proc = child.start()
        child.started_at = self.clock()

    def _exited(self, child: Child, now: float) -> None:
        assert child.proc is not None
        code = child.proc.returncode
        kill_group(child.proc.pid)  # pool children, an embedded beat...: nothing of the dead child lingers
        child.proc = None
        child.exits = [t for t in child.exits if now - t <= self.policy.window] + [now]
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        if len(child.exits) > self.policy.give_up_after:
            child.given_up = True
            self.report(f"{child.name} keeps dying ({len(child.exits)} exits within "
                        f"{self.policy.window:.0f}s, last: {how}); NOT restarting it — see its log, then "
                        "restart `sleuth up`")
            return
        delay = self.policy.delay(len(child.exits))
        child.next_start = now + delay
        self.report(f"{child.name} exited ({how}); restarting in {delay:.1f}s")

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self)


__all__ = ["Child", "RestartPolicy", "Supervisor", "kill_group", "stop_group"]
