"""`cli.forking.preload`: a module of the preload list that cannot be imported is left to the child that needs
it (which then reports its absence itself); `sleuth up` still starts."""

from __future__ import annotations

import pytest

from cli import forking


def test_a_module_that_cannot_be_imported_does_not_stop_the_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forking, "PRELOAD", ("json", "sleuth_no_such_module"))
    monkeypatch.setattr(forking, "_kept_fds", None)  # restored after the test: this process never forks
    forking.preload()
    assert forking._kept_fds is not None and {0, 1, 2} <= forking._kept_fds
