"""SSE clients see the synthesis token by token: worker → Redis pub/sub → `token` events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from api.sse import event_stream
from bootstrap import Services
from config.settings import Settings
from storage import repositories as repo


def test_tokens_published_by_a_worker_reach_the_sse_stream(tmp_path: Path, redis_url: str,
                                                           redis_prefix: str) -> None:
    services = Services(Settings(home=tmp_path / "home", redis_url=redis_url, redis_prefix=redis_prefix))
    with services.session() as session:
        tenant, _ = repo.create_tenant(session, name="t-stream", box=services.secret_box())
        inv, _ = repo.create_investigation(
            session,
            tenant=tenant,
            question="q?",
            mode="agentic",
            callback=None,
            budget={},
            idempotency_key=None,
            deadline_seconds=60,
        )
    pieces = ["The Business ", "plan includes ", "SCIM [1]."]

    async def worker() -> None:
        await asyncio.sleep(0.3)  # the stream has subscribed by now
        for piece in pieces:
            services.state.publish_progress(inv.id, {"type": "token", "text": piece, "attempt": 1})
        services.state.publish_progress(inv.id, {"type": "progress", "ignored": True})
        await asyncio.sleep(0.3)
        with services.session() as session:
            repo.finish_investigation(
                session,
                investigation_id=inv.id,
                status="answered",
                stop_reason="sufficient",
                answer="".join(pieces),
                citations=[],
                caveat=None,
                evidence_tokens=0,
            )

    async def run() -> list[tuple[str | None, str]]:
        task = asyncio.create_task(worker())
        seen = [(e.event, str(e.data)) async for e in event_stream(services, inv.id, poll_seconds=0.05)]
        await task
        return seen

    seen = asyncio.run(run())
    tokens = [json.loads(data) for kind, data in seen if kind == "token"]
    assert [t["text"] for t in tokens] == pieces
    assert seen[-1][0] == "end"
