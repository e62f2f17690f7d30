"""Where the suite's CPU goes, per test file: user + system seconds of this process and of the children it
has reaped (worker subprocesses, `sleuth up` stacks, servers; those its zygote forked and reaped included),
from the file's first test to its last teardown, and a table sorted by CPU at the end. Opt in with
`-p tests.support.cpu_profile`; run with `-n 0` so that one process sees every file. A child killed and
never waited for, or one that daemonises, is not counted."""

from __future__ import annotations

import resource
import time
from collections.abc import Generator

import pytest

from tests.support.zygote import reaped_cpu


def _cpu() -> float:
    total = reaped_cpu()  # workers and servers forked by the zygote: its children, not this process's
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


class CpuProfile:
    """Adds each test's CPU and wall time (setup to teardown, module fixtures included) to its file."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self.tests: dict[str, int] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        path = item.nodeid.split("::", 1)[0]
        cpu, wall = _cpu(), time.monotonic()
        yield
        self.cpu[path] = self.cpu.get(path, 0.0) + _cpu() - cpu
        self.wall[path] = self.wall.get(path, 0.0) + time.monotonic() - wall
        self.tests[path] = self.tests.get(path, 0) + 1

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        total = sum(self.cpu.values())
        terminalreporter.write_sep("=", f"CPU per test file (user+sys, children reaped): {total:.1f} s")
        for path, cpu in sorted(self.cpu.items(), key=lambda pair: -pair[1]):
            terminalreporter.write_line(
                f"{cpu:8.1f} s cpu {self.wall[path]:8.1f} s wall {self.tests[path]:5d} tests  {path}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(CpuProfile(), "sleuth-cpu-profile")
