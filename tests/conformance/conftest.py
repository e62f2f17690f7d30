"""Every reachable search backend, as one parametrized fixture: the conformance suite runs against each.

Today: the embedded engines (tantivy BM25, numpy vector). Elasticsearch and Weaviate join in
`_external_specs` when their URL is set (ELASTICSEARCH_URL / WEAVIATE_URL); tests never hard-code an engine.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import pytest

from adapters.search.embedded_lexical import EmbeddedBM25
from adapters.search.embedded_vector import EmbeddedVectorIndex
from adapters.search.embedder import MiniLMEmbedder
from investigation.ports import SearchBackend


@dataclass(frozen=True)
class BackendSpec:
    """How to build a backend over ONE shared store; calling `make` again gives a second, independent
    client of the same data (what another worker process would hold). `make` must be picklable so a
    spawned process can build its own client."""

    name: str
    make: Callable[[], SearchBackend]


def make_bm25(index_dir: Path) -> SearchBackend:
    return EmbeddedBM25(index_dir)


@cache
def _embedder(cache_dir: Path) -> MiniLMEmbedder:
    # One model session per process: loading it per test would dominate the suite's run time.
    return MiniLMEmbedder(cache_dir=cache_dir)


def make_vector(index_dir: Path, cache_dir: Path) -> SearchBackend:
    return EmbeddedVectorIndex(index_dir, _embedder(cache_dir))


def _external_specs() -> list[BackendSpec]:
    """Server-backed engines, added here when reachable, e.g.:

    if url := os.environ.get("ELASTICSEARCH_URL"):
        specs.append(BackendSpec("elasticsearch", partial(make_elasticsearch, url, index_prefix)))
    if url := os.environ.get("WEAVIATE_URL"):
        specs.append(BackendSpec("weaviate", partial(make_weaviate, url, collection_prefix)))

    They share one server between tests, so every test uses fresh tenant names (the `tenant` fixture).
    """
    return []


BACKENDS = ["bm25", "vector"]


@pytest.fixture(scope="session")
def embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache for the session: the suite embeds the same corpus many times."""
    return tmp_path_factory.mktemp("embeddings")


def _specs(tmp_path: Path, embedding_cache: Path) -> dict[str, BackendSpec]:
    specs = {
        "bm25": BackendSpec("bm25", partial(make_bm25, tmp_path / "index")),
        "vector": BackendSpec("vector", partial(make_vector, tmp_path / "index", embedding_cache)),
    }
    specs.update({s.name: s for s in _external_specs()})
    return specs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend_spec" in metafunc.fixturenames:
        names = BACKENDS + [s.name for s in _external_specs()]
        metafunc.parametrize("backend_spec", names, indirect=True)


@pytest.fixture()
def backend_spec(request: pytest.FixtureRequest, tmp_path: Path, embedding_cache: Path) -> BackendSpec:
    return _specs(tmp_path, embedding_cache)[request.param]


@pytest.fixture()
def search_backend(backend_spec: BackendSpec) -> SearchBackend:
    return backend_spec.make()


@pytest.fixture()
def tenant() -> Callable[[str], str]:
    """Fresh tenant ids per test, so backends on a shared server never see an earlier test's data."""
    suffix = uuid.uuid4().hex[:8]
    return lambda name: f"{name}-{suffix}"
