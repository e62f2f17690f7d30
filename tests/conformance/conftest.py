"""Every reachable search backend, as one parametrized fixture: the conformance suite runs against each.

Always: the embedded engines (tantivy BM25, numpy vector). Elasticsearch and Weaviate join in
`_external_specs` when their URL is set (ELASTICSEARCH_URL / WEAVIATE_URL, plus the credentials Settings
reads); tests never hard-code an engine. A set URL whose server does not answer skips that engine's tests
with the reason locally and FAILS them when CI=true: a configured engine is never silently left out.
Each run writes to its own index/collection (`sleuth-conformance-<run>` / `SleuthConformance<run>`) and
drops it at the end of the session.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from adapters.search.embedded_lexical import EmbeddedBM25
from adapters.search.embedded_vector import EmbeddedVectorIndex
from adapters.search.embedder import MiniLMEmbedder
from config.settings import Settings
from investigation.ports import SearchBackend
from tests.conftest import require_or_skip


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


RUN = uuid.uuid4().hex[:8]  # this session's index/collection on a shared server
ES_INDEX = f"sleuth-conformance-{RUN}"
WEAVIATE_COLLECTION = f"SleuthConformance{RUN}"


def _env_settings(**overrides: Any) -> Settings:
    """Settings from the environment (URLs, API keys, CA certs...) with this run's index names."""
    return Settings(**overrides)


def make_elasticsearch(index: str) -> SearchBackend:
    from adapters.search.elasticsearch import ElasticsearchLexical

    return ElasticsearchLexical.from_settings(
        _env_settings(elasticsearch_index=index, elasticsearch_replicas=0)
    )


def make_weaviate(collection: str, cache_dir: Path) -> SearchBackend:
    from adapters.search.weaviate import WeaviateVector

    return WeaviateVector.from_settings(_env_settings(weaviate_collection=collection), _embedder(cache_dir))


def _external_names() -> list[str]:
    settings = _env_settings()
    return [name for name, url in (("elasticsearch", settings.engines.elasticsearch_url),
                                   ("weaviate", settings.engines.weaviate_url)) if url]


def _external_specs(cache_dir: Path) -> list[BackendSpec]:
    """Server-backed engines whose URL is set. They share one server between tests, so every test uses
    fresh tenant names (the `tenant` fixture)."""
    makers = {"elasticsearch": partial(make_elasticsearch, ES_INDEX),
              "weaviate": partial(make_weaviate, WEAVIATE_COLLECTION, cache_dir)}
    return [BackendSpec(name, makers[name]) for name in _external_names()]


_reachable: dict[str, bool] = {}


def _require_reachable(spec: BackendSpec) -> None:
    if spec.name not in _reachable:
        backend = spec.make()
        _reachable[spec.name] = backend.ping()
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    if not _reachable[spec.name]:
        settings = _env_settings()
        url = (
            settings.engines.elasticsearch_url
            if spec.name == "elasticsearch"
            else settings.engines.weaviate_url
        )
        where = urlsplit(url or "")
        require_or_skip(f"{spec.name} is configured ({where.scheme}://{where.hostname}:{where.port}) "
                        "but does not answer")


@pytest.fixture(scope="session", autouse=True)
def _drop_external_stores(embedding_cache: Path) -> Iterator[None]:
    """Remove this run's index/collection from the shared servers when the session ends."""
    yield
    for spec in _external_specs(embedding_cache):
        if _reachable.get(spec.name):
            from adapters.search.elasticsearch import ElasticsearchLexical
            from adapters.search.weaviate import WeaviateVector

            backend = spec.make()
            assert isinstance(backend, ElasticsearchLexical | WeaviateVector)
            backend.drop()
            backend.close()


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
    specs.update({s.name: s for s in _external_specs(embedding_cache)})
    return specs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend_spec" in metafunc.fixturenames:
        names = BACKENDS + _external_names()
        metafunc.parametrize("backend_spec", names, indirect=True)


@pytest.fixture()
def backend_spec(request: pytest.FixtureRequest, tmp_path: Path, embedding_cache: Path) -> BackendSpec:
    spec = _specs(tmp_path, embedding_cache)[request.param]
    if spec.name not in BACKENDS:
        _require_reachable(spec)
    return spec


@pytest.fixture()
def search_backend(backend_spec: BackendSpec) -> Iterator[SearchBackend]:
    backend = backend_spec.make()
    yield backend
    close = getattr(backend, "close", None)  # server-backed engines hold connection pools / gRPC channels
    if close is not None:
        close()


@pytest.fixture()
def tenant() -> Callable[[str], str]:
    """Fresh tenant ids per test, so backends on a shared server never see an earlier test's data."""
    suffix = uuid.uuid4().hex[:8]
    return lambda name: f"{name}-{suffix}"
