"""The embedded vector index reads a tenant's store file one thread at a time: numpy parses each array's
header with `ast`, and Python 3.11's `ast` raises SystemError ("AST constructor recursion depth mismatch")
when two threads parse at once (seen when a fresh index was first searched from eight threads)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from adapters.search.embedded_vector import EmbeddedVectorIndex
from adapters.search.embedder import MiniLMEmbedder
from adapters.search.ingest import SourceDocument, ingest
from tests.conformance.test_search_concurrency import _run_together

DOCS = [SourceDocument(id="reset", title="Password reset", text="Reset links expire after 30 minutes."),
        SourceDocument(id="invoices", title="Invoices", text="Invoices are PDFs under Billing.")]


def test_first_searches_from_many_threads_read_the_store_one_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = MiniLMEmbedder(cache_dir=tmp_path / "cache")
    ingest(DOCS, tenant="acme", backends=[EmbeddedVectorIndex(tmp_path / "index", embedder)])
    load: Any = np.load
    overlap = threading.Barrier(2, timeout=0.5)  # completes only if two reads are inside np.load at once
    overlapped: list[bool] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            overlap.wait()
            overlapped.append(True)
        except threading.BrokenBarrierError:
            overlap.reset()
        return load(*args, **kwargs)

    monkeypatch.setattr(np, "load", watched)  # the module numpy the index reads with
    fresh = EmbeddedVectorIndex(tmp_path / "index", embedder)  # nothing loaded yet: every thread reads
    results: list[Any] = []

    def search() -> None:
        results.append(fresh.search("acme", "how long does a reset link last", 2))

    errors = _run_together([search] * 3)
    assert errors == [] and overlapped == []
    assert len(results) == 3 and all(hits and hits[0].source_id == "reset" for hits in results)
