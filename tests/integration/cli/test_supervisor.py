"""The supervisor of `sleuth up` with real child processes and an injected clock (no sleeping for backoff)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psutil

from cli.supervisor import Child, RestartPolicy, Supervisor
from tests.support.wait import wait_until

# A child that starts a grandchild in its own process group (like a Celery worker's pool or embedded beat),
# writes the grandchild's pid, then waits.
FAMILY = ("import subprocess, sys, time; g = subprocess.Popen([sys.executable, '-c', 'import time; "
          "time.sleep(300)']); open(sys.argv[1], 'w').write(str(g.pid)); time.sleep(300)")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _spawn(code: str, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code, *args], start_new_session=True)


def _wait(predicate: Callable[[], object], timeout: float = 20.0) -> bool:
    return wait_until(predicate, timeout, interval=0.05)


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _next_start(child: Child) -> float:
    """When the supervisor will start `child` again (it must have planned a restart)."""
    assert child.next_start is not None
    return child.next_start


def _tick_until(sup: Supervisor, predicate: Callable[[], object], timeout: float = 20.0) -> bool:
    def step() -> bool:
        sup.tick()
        return bool(predicate())
    return _wait(step, timeout)


def test_a_killed_child_is_cleaned_up_with_its_group_and_restarted_after_backoff(tmp_path: Path) -> None:
    clock = Clock()
    messages: list[str] = []
    pidfile = tmp_path / "grandchild.pid"
    family = Child("worker0", lambda: _spawn(FAMILY, str(pidfile)))
    bystander = Child("api", lambda: _spawn("import time; time.sleep(300)"))
    sup = Supervisor([bystander, family], policy=RestartPolicy(base_delay=2.0), clock=clock,
                     report=messages.append)
    sup.start()
    try:
        assert _wait(lambda: pidfile.exists() and pidfile.read_text())
        first_pid, grandchild = family.pid, int(pidfile.read_text())
        api_pid = bystander.pid
        assert first_pid is not None and _alive(grandchild)
        pidfile.unlink()

        os.kill(first_pid, signal.SIGKILL)
        assert _tick_until(sup, lambda: family.state == "restarting")
        assert _wait(lambda: not _alive(grandchild)), "the dead child's process group must be killed"
        assert any("worker0 exited (killed by signal 9); restarting in 2.0s" in m for m in messages)
        sup.tick()
        assert family.pid is None  # backoff: not restarted before its time
        clock.now += 2.0
        sup.tick()
        assert family.pid is not None and family.pid != first_pid and family.restarts == 1
        assert bystander.pid == api_pid  # nobody else was touched
        assert sup.status()["worker0"] == {"pid": family.pid, "state": "running", "restarts": 1}
        assert _wait(lambda: pidfile.exists() and pidfile.read_text())
        second_grandchild = int(pidfile.read_text())
    finally:
        sup.stop()
    assert family.pid is None and bystander.pid is None
    assert _wait(lambda: not _alive(second_grandchild)), "stop() ends every process group"


def test_a_child_that_keeps_dying_is_reported_not_restarted_in_a_loop() -> None:
    clock = Clock()
    messages: list[str] = []
    starts: list[int] = []

    def crashing() -> subprocess.Popen[bytes]:
        starts.append(1)
        return _spawn("import sys; sys.exit(3)")

    crasher = Child("beat", crashing)
    steady = Child("api", lambda: _spawn("import time; time.sleep(300)"))
    policy = RestartPolicy(base_delay=1.0, max_delay=8.0, give_up_after=3, window=120.0)
    sup = Supervisor([steady, crasher], policy=policy, clock=clock, report=messages.append)
    sup.start()
    delays = []
    try:
        while not crasher.given_up:
            assert _tick_until(sup, lambda: crasher.proc is None)
            if crasher.next_start is not None:
                delays.append(crasher.next_start - clock.now)
                clock.now = crasher.next_start
                sup.tick()
        assert delays == [1.0, 2.0, 4.0]  # exponential backoff, never a tight loop
        assert len(starts) == 4
        clock.now += 1000
        for _ in range(5):
            sup.tick()
        assert len(starts) == 4 and crasher.state == "failed"
        assert any("beat keeps dying (4 exits within 120s, last: exit code 3); NOT restarting" in m
                   for m in messages)
        assert steady.pid is not None  # the rest of the stack keeps running
    finally:
        sup.stop()


def test_a_child_up_long_enough_starts_a_fresh_backoff() -> None:
    clock = Clock()
    child = Child("api", lambda: _spawn("import time; time.sleep(300)"))
    sup = Supervisor([child], policy=RestartPolicy(base_delay=1.0, stable_after=60.0), clock=clock,
                     report=lambda m: None)
    sup.start()
    try:
        for expected in (1.0, 2.0):
            assert child.pid is not None
            os.kill(child.pid, signal.SIGKILL)
            assert _tick_until(sup, lambda: child.next_start is not None)
            assert _next_start(child) - clock.now == expected
            clock.now = _next_start(child)
            sup.tick()
        clock.now += 61
        sup.tick()  # stable now: its history is forgotten
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        assert _tick_until(sup, lambda: child.next_start is not None)
        assert _next_start(child) - clock.now == 1.0
    finally:
        sup.stop()
