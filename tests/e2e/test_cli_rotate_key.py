"""`sleuth tenants rotate-key`: a CLI process gives the tenant a new key; the old key is refused and
the tenant's console sessions are deleted from Redis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from investigation.errors import Forbidden
from storage import repositories as repo
from storage.console_sessions import ConsoleSessions
from tests.support.cli import run_sleuth
from tests.support.stack import build_stack


def test_rotate_key_replaces_the_key_and_ends_the_sessions(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    sessions = ConsoleSessions(stack.services.redis, redis_prefix)
    with stack.services.session() as db:
        tenant = repo.get_tenant_by_name(db, name=stack.tenant_name)
    live, _ = sessions.create(tenant_id=tenant.id, key_tag="old", scope="console", ttl_seconds=600)
    run = run_sleuth(["tenants", "rotate-key", stack.tenant_name, "--json"], stack.env(), timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["api_key"].startswith("sk_") and out["api_key"] != stack.api_key and out["sessions_ended"] == 1
    assert sessions.get(live) is None
    with stack.services.session() as db:
        assert repo.authenticate(db, api_key=out["api_key"]).id == tenant.id
        with pytest.raises(Forbidden, match="invalid API key"):
            repo.authenticate(db, api_key=stack.api_key)
