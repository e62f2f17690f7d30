"""`sleuth gaps`: CLI processes over a seeded tenant; text and --json output, and bad input (a malformed
--since, an unknown --tenant) refused naming the option with a non-zero exit code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.app.test_gaps import CSV, MOBILE, seed_gaps
from tests.support.cli import run_sleuth
from tests.support.stack import Stack, build_stack


def _sleuth(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return run_sleuth(args, stack.env(), timeout=180)


def test_gaps_as_text_and_json(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    ids = seed_gaps(stack)
    run = _sleuth(stack, "gaps", "--tenant", stack.tenant_name, "--since", "30d", "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["tenant"] == stack.tenant_name and out["questions"] == 7
    assert [(g["count"], g["trend"]) for g in out["gaps"]] == [(4, "+3"), (2, "-1"), (1, "new")]
    assert out["gaps"][0]["label"] in CSV and [q["id"] for q in out["gaps"][0]["questions"]] == ids["csv"]
    text = _sleuth(stack, "gaps", "--tenant", stack.tenant_name)
    assert text.returncode == 0, text.stderr
    assert "7 questions refused, rated wrong or partly" in text.stdout and MOBILE in text.stdout
    assert ids["csv"][0] in text.stdout and "csv" in text.stdout


def test_bad_input_names_the_option(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    for args, option in ((("--tenant", stack.tenant_name, "--since", "thirty"), "--since"),
                         (("--tenant", stack.tenant_name, "--since", "0d"), "--since"),
                         (("--tenant", "no-such-tenant"), "--tenant")):
        for command in (["gaps"], ["feedback", "export"]):
            run = _sleuth(stack, *command, *args)
            assert run.returncode != 0 and option in run.stderr, (command, args, run.stderr)
            assert run.stdout == ""
