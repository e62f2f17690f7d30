"""Source syncs as Celery work on a real worker process reading only the `sources` queue: batches as separate
tasks, beat's `sources_due` starting a due source, one run per source at a time, and a batch that died after
indexing (before its cursor was stored) read again by the next attempt, never skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app import source_sync
from app.sources import add_source, get_source
from storage import _sources as sources_repo
from storage import repositories as repo
from storage.source_runs import RedisRuns
from tests.support.stack import Stack
from tests.support.wait import wait_until
from workers import names

FILES = 150  # two batches of the folder reader


def _folder(tmp_path: Path, count: int) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(count):
        path = docs / f"article-{i:03d}.md"
        path.write_text(f"# Article {i}\n\nThe answer to question number {i} is the colour teal-{i}.",
                        encoding="utf-8")
        os.utime(path, (1000, 1000))
    return docs


def _add(stack: Stack, docs: Path, name: str = "kb"):  # type: ignore[no-untyped-def]
    with stack.services.session() as session:
        tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
    add_source(stack.services, tenant=tenant, data={"name": name, "type": "folder", "path": str(docs)})
    return get_source(stack.services, tenant=tenant, name=name)


def _finished(stack: Stack, source_id: str):  # type: ignore[no-untyped-def]
    with stack.services.session() as session:
        source = sources_repo.get_source(session, source_id=source_id)
    return source if source.last_finished_at is not None and source.run_id is None else None


def test_a_worker_on_the_sources_queue_syncs_in_batches(stack: Stack, tmp_path: Path) -> None:
    from cli.commands import celery_for

    source = _add(stack, _folder(tmp_path, FILES))
    stack.start_worker(concurrency=1, queues=names.Q_SOURCES)
    stack.wait_ready()
    celery_for(stack.settings).send_task(names.T_SOURCES_DUE)
    assert wait_until(lambda: _finished(stack, source.id), timeout=120)
    done = _finished(stack, source.id)
    assert done.last_error is None and done.items == FILES
    assert done.last_stats["added"] == FILES
    assert done.cursor == {"since": 1000}
    hits = stack.services.backends["bm25"].search(stack.tenant_id, "colour teal-149", 3)
    assert hits and hits[0].source_id == f"{source.id}:article-149.md@v1"
    log = (stack.settings.home / "worker-0.log").read_text(errors="replace")
    assert "Traceback" not in log


def test_one_run_per_source_at_a_time(stack: Stack, tmp_path: Path) -> None:
    source = _add(stack, _folder(tmp_path, 3))
    runs = RedisRuns(stack.services.redis, stack.settings.redis_prefix)
    first = source_sync.start(stack.services, source.id, runs=runs)
    assert first is not None
    assert source_sync.start(stack.services, source.id, runs=runs) is None  # the lock is held
    assert runs.holder(source.id) == first
    while source_sync.batch(stack.services, source.id, first, runs=runs).more:
        pass
    assert runs.holder(source.id) is None  # released when the run ends
    assert source_sync.start(stack.services, source.id, runs=runs) is not None


def test_a_batch_killed_before_its_cursor_moved_is_read_again(stack: Stack, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    source = _add(stack, _folder(tmp_path, FILES))
    run_id = source_sync.start(stack.services, source.id)
    assert run_id is not None
    real = sources_repo.record_batch

    def die(*args: object, **kwargs: object) -> bool:
        raise SystemExit("worker killed after indexing, before the cursor was stored")

    monkeypatch.setattr(sources_repo, "record_batch", die)
    with pytest.raises(SystemExit):
        source_sync.batch(stack.services, source.id, run_id)
    monkeypatch.setattr(sources_repo, "record_batch", real)
    outcomes = []
    while True:
        outcome = source_sync.batch(stack.services, source.id, run_id)
        outcomes.append(outcome.stats)
        if not outcome.more:
            break
    done = _finished(stack, source.id)
    assert done is not None and done.items == FILES
    # The first page was read again from the same cursor and written again as the same version.
    assert outcomes[0]["added"] == 100 and sum(o["added"] for o in outcomes) == FILES
    hits = stack.services.backends["vector"].search(stack.tenant_id, "the colour teal-7", 50)
    assert {p.source_id for p in hits if "article-007" in p.source_id} == {f"{source.id}:article-007.md@v1"}


def test_a_source_removed_while_a_batch_indexes_leaves_nothing_behind(stack: Stack, tmp_path: Path) -> None:
    from app.source_readers import open_reader
    from app.sources import remove_source
    from investigation.errors import NotFound

    source = _add(stack, _folder(tmp_path, 5))
    run_id = source_sync.start(stack.services, source.id)
    assert run_id is not None

    class RemovedMeanwhile:
        def __init__(self, inner: object) -> None:
            self.inner = inner

        def page(self, cursor: dict[str, object]) -> object:
            page = self.inner.page(cursor)  # type: ignore[attr-defined]
            with stack.services.session() as session:
                tenant = repo.get_tenant(session, tenant_id=stack.tenant_id)
            remove_source(stack.services, tenant=tenant, name="kb")  # nothing indexed yet: removes nothing
            return page

        def close(self) -> None:
            self.inner.close()  # type: ignore[attr-defined]

    with pytest.raises(NotFound):
        source_sync.batch(stack.services, source.id, run_id,
                          reader_factory=lambda services, row: RemovedMeanwhile(open_reader(services, row)))
    for backend in stack.services.backends.values():
        assert not any(
            p.source_id.startswith(source.id) for p in backend.search(stack.tenant_id, "colour teal", 20)
        )
