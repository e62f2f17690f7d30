"""Progress a person can follow while `make test` runs the suite in parallel (pytest-xdist prints only dots):
one line per finished test file — how far the run is, the time since it started, the file and its counts —
and each failure the moment it happens. Enabled with `-p tests.support.progress`."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable

import pytest


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class FileProgress:
    """Counts reports per test file; writes a line when a file's last test has finished."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = time.monotonic()
        self.totals: Counter[str] = Counter()
        self.finished: Counter[str] = Counter()
        self.outcomes: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.total = 0
        self.done = 0

    def _write(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(line)

    def _count(self, nodeids: Iterable[str]) -> None:
        if self.totals:  # every xdist worker reports the same collection
            return
        ids = list(nodeids)
        self.totals.update(_file_of(nodeid) for nodeid in ids)
        self.total = len(ids)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._count(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self._count(ids)

    def pytest_report_teststatus(self, report: pytest.TestReport,
                                 config: pytest.Config) -> tuple[str, str, str] | None:
        # A passing test prints nothing: its file's line says it. Anything else keeps pytest's letter.
        if report.when == "call" and report.passed:
            return "passed", "", "PASSED"
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = _file_of(report.nodeid)
        outcomes = self.outcomes[path]
        if report.failed:
            outcomes["failed"] += 1
            self._write(f"FAILED {report.nodeid.split('@', 1)[0]} ({report.when})")
        elif report.skipped:
            outcomes["skipped"] += 1
        elif report.when == "call":
            outcomes["passed"] += 1
        if report.when != "teardown":
            return
        self.finished[path] += 1
        self.done += 1
        if self.finished[path] != self.totals.get(path):
            return
        minutes, seconds = divmod(int(time.monotonic() - self.started), 60)
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(outcomes.items()))
        share = 100 * self.done // max(self.total, 1)
        self._write(f"[{share:3d}%] {minutes:2d}:{seconds:02d}  {path}  ({counts})")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist), not an xdist worker
        config.pluginmanager.register(FileProgress(config), "sleuth-file-progress")
