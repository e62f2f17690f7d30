"""The partition scenario's pure parts: interface names the kernel accepts, plans whose cut outlasts the
visibility timeout, and a machine without network namespaces reported as skipped (exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from cli.chaos import netns, run
from cli.chaos.partition_stack import PLANS, WORKERS


def test_names_are_unique_to_the_run_and_fit_the_kernels_15_characters() -> None:
    a, b = netns.Topology(["api", *WORKERS]), netns.Topology(["api", *WORKERS])
    assert a.token != b.token
    a.prefix = "10.210.7"
    for host in a.hosts:
        assert len(a._port(host)) <= 15 and a.token in a.ns(host)
    assert len(a.bridge) <= 15
    assert a.services_ip == "10.210.7.1" and a.ip("w1") == "10.210.7.12"
    assert a.argv("w0", ["true"]) == ["ip", "netns", "exec", a.ns("w0"), "true"]


@pytest.mark.parametrize("name", sorted(PLANS))
def test_every_plan_cuts_for_longer_than_the_visibility_timeout_and_kills_before_it(name: str) -> None:
    plan = PLANS[name]
    assert plan.cut_s > plan.visibility_timeout > plan.task_time_limit
    assert plan.task_time_limit - 10 >= 10  # the soft limit leaves the watchdog its questions to the workers


def test_without_root_the_scenario_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cli.chaos.netns.os.geteuid", lambda: 1000)
    assert netns.unavailable() == "network namespaces need root (ip netns add)"


def test_where_namespaces_are_refused_the_row_is_skipped_and_the_run_exits_0(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(
        run, "_partition_not_permitted", lambda: "`ip netns add` failed: Operation not permitted"
    )
    out = tmp_path / "chaos.json"
    with open(tmp_path / "console.txt", "w") as shown:
        code = run.run_chaos(scenario="partition", scale="small", report_path=None, json_path=out,
                             console=Console(file=shown), postgres_url=None)
    assert code == 0
    [row] = json.loads(out.read_text())
    assert row["passed"] is None and row["note"].startswith("skipped: `ip netns add` failed")
