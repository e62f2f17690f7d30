"""Every search backend under the concurrency Sleuth runs it with: threads (the inline executor's pool, the
API threadpool) and forked processes (Celery prefork). Many searches and ingests at once, nothing raises."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Sequence
from functools import partial

import pytest

from adapters.search.ingest import SourceDocument, ingest
from investigation.ports import SearchBackend
from tests.conformance.conftest import BackendSpec
from tests.conformance.test_search_backends import ACME

Tenants = Callable[[str], str]
THREADS = 8


def _run_together(jobs: Sequence[Callable[[], object]]) -> list[BaseException]:
    """Start every job at the same instant (a barrier) in its own thread; the errors they raised."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(jobs))

    def wrap(job: Callable[[], object]) -> None:
        barrier.wait()
        try:
            job()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted on below
            errors.append(exc)

    threads = [threading.Thread(target=wrap, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return errors


def test_first_searches_from_many_threads_at_once(backend_spec: BackendSpec, tenant: Tenants) -> None:
    # A fresh client opened by several threads at the same moment: the embedded BM25 index used to raise
    # `RuntimeError: Already mutably borrowed` here (the inline executor's thread pool in `sleuth bench`).
    acme = tenant("acme")
    ingest(ACME, tenant=acme, backends=[backend_spec.make()])
    for _ in range(15):
        backend = backend_spec.make()
        errors = _run_together([partial(backend.search, acme, "ERR_4021 mailbox sync", 3)] * THREADS)
        assert errors == []
        _close(backend)


def test_searches_and_ingests_at_the_same_time(backend_spec: BackendSpec, tenant: Tenants) -> None:
    acme = tenant("acme")
    backend = backend_spec.make()
    ingest(ACME[:4], tenant=acme, backends=[backend])
    seen: list[int] = []

    def searcher() -> None:
        for _ in range(25):
            hits = backend.search(acme, "password reset link", 3)
            seen.append(len(hits))

    def ingester(offset: int) -> None:
        for i in range(4):
            doc = SourceDocument(id=f"extra-{offset}-{i}", title=f"Extra note {offset} {i}",
                                 text=f"An extra note number {i} about password reset links and invoices.")
            ingest([doc], tenant=acme, backends=[backend])

    errors = _run_together([searcher] * (THREADS - 2) + [lambda: ingester(0), lambda: ingester(1)])
    assert errors == []
    assert seen and min(seen) >= 1
    assert backend.count(acme) == 4 + 8  # every ingest landed once, nothing lost or doubled
    assert backend.search(acme, "ERR_4021 mailbox sync", 1)[0].source_id == "err-4021"
    _close(backend)


def _search_in_child(backend: SearchBackend, acme: str, out: multiprocessing.Queue[object]) -> None:
    try:
        out.put(backend.search(acme, "SAML single sign-on Okta", 1)[0].source_id)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        out.put(repr(exc))


def _prefork_parent(make: Callable[[], SearchBackend], acme: str, busy_thread: bool,
                    report: multiprocessing.Queue[object]) -> None:
    """A Celery worker's main process in miniature: a clean interpreter that opens the client, uses it,
    and forks pool children — optionally while a thread of its own is in the middle of a search."""
    backend = make()
    first = backend.search(acme, "SAML single sign-on Okta", 1)[0].source_id
    ctx = multiprocessing.get_context("fork")
    out: multiprocessing.Queue[object] = ctx.Queue()
    busy = threading.Event()

    def keep_searching() -> None:
        while not busy.is_set():
            backend.search(acme, "password reset", 2)

    thread = threading.Thread(target=keep_searching)
    if busy_thread:
        thread.start()
    try:
        children = [ctx.Process(target=_search_in_child, args=(backend, acme, out)) for _ in range(3)]
        for child in children:
            child.start()
        results = [out.get(timeout=60) for _ in children]
        for child in children:
            child.join(30)
    finally:
        busy.set()
        if busy_thread:
            thread.join(30)
    report.put([first, *results])


def test_a_client_keeps_working_in_forked_children(backend_spec: BackendSpec, tenant: Tenants) -> None:
    # Celery prefork: the parent may have opened the client (and its locks) before forking pool children.
    # The forking parent is a fresh interpreter, as a worker's main process is: forking the test runner
    # itself would copy whatever locks earlier tests' threads happened to hold.
    if backend_spec.name not in ("bm25", "vector"):
        pytest.skip("server-backed clients are built per worker process after fork (workers.runtime)")
    acme = tenant("acme")
    ingest(ACME, tenant=acme, backends=[backend_spec.make()])
    spawn = multiprocessing.get_context("spawn")
    report: multiprocessing.Queue[object] = spawn.Queue()
    # The lexical engine's lock is also exercised by forking while a sibling thread searches. For the
    # vector engine a fork taken while a sibling thread is inside numpy hung the child now and then
    # (before any of our code ran in it), which Celery never does: its main process forks while idle.
    parent = spawn.Process(target=_prefork_parent,
                           args=(backend_spec.make, acme, backend_spec.name == "bm25", report))
    parent.start()
    try:
        results = report.get(timeout=150)
    finally:
        parent.join(30)
        if parent.is_alive():
            parent.kill()
    assert results == ["sso-saml"] * 4


def _close(backend: SearchBackend) -> None:
    close = getattr(backend, "close", None)
    if close is not None:
        close()
