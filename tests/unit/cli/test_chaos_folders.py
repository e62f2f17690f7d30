"""`sleuth chaos` removes a stack's working folder when its scenarios passed and keeps it, named on the
console, when one failed or the run broke off (the e2e chaos tests check the passing runs leave nothing)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from cli.chaos.harness import SCALES, Harness
from cli.chaos.result import Result
from cli.chaos.run import _keep_or_discard


def _stack(tmp_path: Path) -> Harness:
    work = tmp_path / "sleuth-chaos-x"
    (work / "home" / "run").mkdir(parents=True)
    (work / "up.log").write_text("the stack's log\n")
    harness = Harness(SCALES["small"], work=work)
    harness.receiver.close()
    return harness


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=300), out


def test_a_passing_stack_leaves_nothing(tmp_path: Path) -> None:
    harness, (console, out) = _stack(tmp_path), _console()
    assert harness.home == harness.work / "home"
    _keep_or_discard(harness, [Result("a", True), Result("b", None, note="needs PostgreSQL")], 2, console)
    assert not harness.work.exists() and out.getvalue() == ""


def test_a_failed_scenario_keeps_the_folder_and_names_it(tmp_path: Path) -> None:
    harness, (console, out) = _stack(tmp_path), _console()
    _keep_or_discard(harness, [Result("a", True), Result("b", False, note="lost 2")], 2, console)
    assert (harness.work / "up.log").read_text() == "the stack's log\n"
    assert f"kept for inspection: {harness.work}" in out.getvalue()


def test_a_run_that_broke_off_keeps_the_folder(tmp_path: Path) -> None:
    harness, (console, out) = _stack(tmp_path), _console()
    _keep_or_discard(harness, [Result("a", True)], 3, console)  # the stack died before b and c ran
    assert harness.work.exists() and "kept for inspection" in out.getvalue()
