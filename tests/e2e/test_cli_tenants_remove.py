"""`sleuth tenants update --retention-days` and `sleuth tenants remove`: CLI processes; bad input names
the field, removal needs --confirm and then leaves nothing of the tenant."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from investigation.errors import NotFound
from storage import repositories as repo
from tests.support.cli import run_sleuth
from tests.support.stack import Stack, build_stack


def _sleuth(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return run_sleuth(["tenants", *args], stack.env(), timeout=120)


def test_retention_days_are_set_and_checked(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    bad = _sleuth(stack, "update", stack.tenant_name, "--retention-days", "0")
    assert bad.returncode != 0 and "limits.retention_days" in bad.stderr and "at least 1" in bad.stderr
    run = _sleuth(stack, "update", stack.tenant_name, "--retention-days", "30", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"name": stack.tenant_name, "retention_days": 30}
    with stack.services.session() as db:
        assert repo.get_tenant(db, tenant_id=stack.tenant_id).limits["retention_days"] == 30


def test_remove_needs_confirm_then_removes_everything(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    stack.asked("What does error ERR_4021 mean?")
    refused = _sleuth(stack, "remove", stack.tenant_name)
    assert refused.returncode != 0 and "--confirm" in refused.stderr
    run = _sleuth(stack, "remove", stack.tenant_name, "--confirm", "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert (
        out["rows"]["tenant"] == 1 and out["rows"]["investigation"] == 1 and out["index_entries"]["bm25"] > 0
    )
    with stack.services.session() as db, pytest.raises(NotFound):
        repo.get_tenant(db, tenant_id=stack.tenant_id)
    unknown = _sleuth(stack, "remove", "no-such-tenant", "--confirm")
    assert unknown.returncode != 0 and "no-such-tenant" in unknown.stderr
