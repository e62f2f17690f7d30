"""One engine crashing with an unexpected error (a bug, not a SleuthError) degrades its hop; the run
finishes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from investigation.state import Chunk, Passage
from storage import repositories as repo
from tasks import inline
from tests.support.stack import build_stack


class CrashingEngine:
    """An engine whose search fails the way a library bug does (what tantivy raised under threads)."""

    name = "vector"

    def search(self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
               visibility: Sequence[str] | None = None) -> list[Passage]:
        raise RuntimeError("Already mutably borrowed")

    def upsert(self, tenant: str, chunks: Sequence[Chunk]) -> int:
        return 0

    def delete(self, tenant: str, source_ids: Sequence[str]) -> int:
        return 0

    def count(self, tenant: str) -> int:
        return 0

    def ping(self) -> bool:
        return True


def test_a_crashing_engine_degrades_the_hop_and_the_run_finishes(
        tmp_path: Path, redis_url: str, redis_prefix: str, db_url: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix, database_url=db_url)
    services = stack.services
    services.backends["vector"] = CrashingEngine()
    with services.session() as session:
        tenant = repo.get_tenant_by_name(session, name=stack.tenant_name)
        inv, _ = repo.create_investigation(session, tenant=tenant, question="How much does the Business "
                                           "plan cost per user?", mode="agentic", callback=None, budget={},
                                           idempotency_key=None, deadline_seconds=120)
        inv_id = inv.id
    inline.run(services, inv_id, deliver=False)
    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        events = repo.list_events(session, investigation_id=inv_id)
    assert inv.status == "answered", (inv.status, inv.error)
    errors = [e.data["error"] for e in events if e.kind == "retrieval" and e.data.get("engine") == "vector"]
    assert errors and all("RuntimeError: Already mutably borrowed" in e for e in errors)
    assert any(e.kind == "retrieval" and e.data.get("engine") == "bm25" and e.data["ids"] for e in events)
