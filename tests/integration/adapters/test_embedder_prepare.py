"""MiniLMEmbedder.prepare: a hop's queries embedded in the background, ahead of their vector search, with the
vectors a search would compute itself; a search waits for a running run, takes over one not started, and
survives a failed one (runs the real int8 model)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import numpy as np

from adapters.search.embedder import MiniLMEmbedder
from tests.support.fresh import run_script

QUERIES = ["Which plan includes SCIM provisioning?", "Who directed the 1958 film Vertigo?",
           "What does error ERR_4021 mean?"]


def _alone(tmp_path: Path, query: str) -> np.ndarray:
    return np.asarray(MiniLMEmbedder(cache_dir=tmp_path / "alone").embed_array([query], persist=False)[0])


class Runs:
    """Wraps an embedder's model run: which texts ran in which thread; optionally held until released."""

    def __init__(self, embedder: MiniLMEmbedder, *, hold: bool = False, fail: bool = False) -> None:
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.entered = threading.Event()
        self.entered_here = threading.Event()  # a run outside the background threads has started
        self.release = threading.Event()
        if not hold:
            self.release.set()
        real = embedder._infer

        def run(model: tuple[object, object], batch: list[str]) -> list[np.ndarray]:
            self.calls.append((threading.current_thread().name, tuple(batch)))
            self.entered.set()
            if not threading.current_thread().name.startswith("embed-ahead"):
                self.entered_here.set()
            assert self.release.wait(timeout=20)
            if fail and threading.current_thread().name.startswith("embed-ahead"):
                raise RuntimeError("the model run failed")
            return real(model, batch)

        embedder._infer = run  # type: ignore[method-assign,assignment]

    def ahead(self) -> list[tuple[str, ...]]:
        return [batch for name, batch in self.calls if name.startswith("embed-ahead")]

    def here(self) -> list[tuple[str, ...]]:
        return [batch for name, batch in self.calls if not name.startswith("embed-ahead")]


def test_prepared_queries_run_one_text_each_in_the_background_and_the_search_reuses_them(
    tmp_path: Path,
) -> None:
    embedder = MiniLMEmbedder(cache_dir=tmp_path / "cache")
    runs = Runs(embedder)
    embedder.prepare(QUERIES[:2] + ["   "])  # a blank query is never searched: not embedded either
    found = embedder.embed_array(QUERIES[:2], persist=False)  # waits for the runs, runs no model itself
    assert sorted(runs.ahead()) == sorted([(QUERIES[0],), (QUERIES[1],)]) and runs.here() == []
    assert all(np.array_equal(found[i], _alone(tmp_path, q)) for i, q in enumerate(QUERIES[:2]))
    assert embedder._inflight == {}
    embedder.prepare(QUERIES[:2])  # already known: nothing runs again
    assert len(runs.calls) == 2
    embedder.close()
    with sqlite3.connect(tmp_path / "cache" / "embeddings.sqlite") as db:  # queries stay off the disk cache
        assert db.execute("SELECT count(*) FROM embeddings").fetchone() == (0,)


def test_a_search_waits_for_its_query_while_the_run_is_under_way(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()
    runs = Runs(embedder, hold=True)
    embedder.prepare([QUERIES[0]])
    assert runs.entered.wait(timeout=20)  # the background run has started: the search must not start another
    found: list[np.ndarray] = []
    search = threading.Thread(
        target=lambda: found.append(embedder.embed_array([QUERIES[0]], persist=False)[0])
    )
    search.start()
    runs.release.set()
    search.join(timeout=30)
    assert runs.here() == [] and runs.ahead() == [(QUERIES[0],)]
    assert np.array_equal(found[0], _alone(tmp_path, QUERIES[0]))


def test_a_search_takes_over_a_prepared_query_whose_run_has_not_started(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()
    runs = Runs(embedder, hold=True)
    embedder.prepare(QUERIES)  # two background runs at a time: the third waits for a free thread
    ahead = embedder._ahead
    assert ahead is not None
    waiting = embedder._inflight[embedder._key(QUERIES[2])]
    # The two started runs are held; the third query's search does not wait for them.
    search = threading.Thread(target=lambda: embedder.embed_array([QUERIES[2]], persist=False), name="search")
    search.start()
    assert runs.entered_here.wait(timeout=20)
    assert ("search", (QUERIES[2],)) in runs.calls and waiting.cancelled()
    runs.release.set()
    search.join(timeout=30)
    ahead.shutdown(wait=True)
    assert sorted(runs.ahead()) == sorted([(QUERIES[0],), (QUERIES[1],)])
    assert embedder._inflight == {}
    assert np.array_equal(embedder.embed_array([QUERIES[2]], persist=False)[0], _alone(tmp_path, QUERIES[2]))


def test_a_failed_background_run_is_only_a_miss(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()
    runs = Runs(embedder, fail=True)
    embedder.prepare([QUERIES[1]])
    vector = embedder.embed_array([QUERIES[1]], persist=False)[0]
    assert runs.ahead() == [(QUERIES[1],)] and runs.here() == [(QUERIES[1],)]
    assert np.array_equal(vector, _alone(tmp_path, QUERIES[1])) and embedder._inflight == {}


FORKING_PARENT = """
import os, sys
from adapters.search.embedder import MiniLMEmbedder
from tests.support.fresh import run_script
embedder = MiniLMEmbedder()
embedder.prepare([sys.argv[1]])
embedder.embed_array([sys.argv[1]], persist=False)
pid = os.fork()
if pid == 0:  # the child: no executor thread was inherited; it prepares and embeds on its own
    ok = embedder._ahead is None and embedder._inflight == {}
    embedder.prepare([sys.argv[2]])
    ok = ok and embedder.embed_array([sys.argv[2]], persist=False).shape == (1, 384)
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
sys.exit(os.WEXITSTATUS(status))
"""


def test_a_forked_child_starts_without_the_parents_background_runs() -> None:
    # The forking parent is a fresh interpreter, as a Celery worker's main process is: the test runner's
    # own process holds other tests' model sessions, which a forked child must never touch.
    run_script(FORKING_PARENT, QUERIES[0], QUERIES[1])  # exits 0 when the child found what it should


def test_preparing_says_whether_a_query_is_still_being_embedded_ahead(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(cache_dir=tmp_path / "cache")
    assert not embedder.preparing()
    runs = Runs(embedder, hold=True)
    embedder.prepare(QUERIES[:1])
    assert runs.entered.wait(timeout=20)
    assert embedder.preparing()  # the run is held: the hop would still wait for this vector
    runs.release.set()
    embedder.embed_array(QUERIES[:1], persist=False)  # waits for the run, as a vector search does
    assert not embedder.preparing()
