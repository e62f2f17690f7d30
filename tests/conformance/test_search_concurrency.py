"""Every search backend under the concurrency Sleuth runs it with: threads (the inline executor's pool, the
API threadpool) and forked processes (Celery prefork). Many searches and ingests at once, nothing raises."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable

import pytest

from adapters.search.ingest import SourceDocument, ingest
from investigation.ports import SearchBackend
from tests.conformance.conftest import BackendSpec
from tests.conformance.test_search_backends import ACME

pytestmark = pytest.mark.conformance

Tenants = Callable[[str], str]
THREADS = 8


def _run_together(jobs: list[Callable[[], None]]) -> list[BaseException]:
    """Start every job at the same instant (a barrier) in its own thread; the errors they raised."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(jobs))

    def wrap(job: Callable[[], None]) -> None:
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
        errors = _run_together([lambda b=backend: b.search(acme, "ERR_4021 mailbox sync", 3)] * THREADS)
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


def test_a_client_keeps_working_in_forked_children(backend_spec: BackendSpec, tenant: Tenants) -> None:
    # Celery prefork: the parent may have opened the client (and its locks) before forking pool children.
    if backend_spec.name not in ("bm25", "vector"):
        pytest.skip("server-backed clients are built per worker process after fork (workers.runtime)")
    acme = tenant("acme")
    backend = backend_spec.make()
    ingest(ACME, tenant=acme, backends=[backend])
    assert backend.search(acme, "SAML single sign-on Okta", 1)[0].source_id == "sso-saml"
    ctx = multiprocessing.get_context("fork")
    out: multiprocessing.Queue[object] = ctx.Queue()
    # Fork while other threads of the parent are busy searching (and may hold the client's lock).
    busy = threading.Event()

    def keep_searching() -> None:
        # Only the lexical engine's lock is exercised this way. For the vector engine a fork taken while a
        # sibling thread is inside a numpy call hung the child now and then (before any of our code ran in
        # it), which Celery never does: its parent forks pool children while idle.
        while backend_spec.name == "bm25" and not busy.is_set():
            backend.search(acme, "password reset", 2)

    thread = threading.Thread(target=keep_searching)
    thread.start()
    try:
        children = [ctx.Process(target=_search_in_child, args=(backend, acme, out)) for _ in range(3)]
        for child in children:
            child.start()
        results = [out.get(timeout=120) for _ in children]
        for child in children:
            child.join(30)
    finally:
        busy.set()
        thread.join(30)
    assert results == ["sso-saml"] * 3


def _close(backend: SearchBackend) -> None:
    close = getattr(backend, "close", None)
    if close is not None:
        close()
