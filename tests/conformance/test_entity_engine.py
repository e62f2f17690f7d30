"""The `entities` engine's promises on every backend that has one: the embedded entity index always, and
Elasticsearch's entity field when ELASTICSEARCH_URL is set, Weaviate's entity property when WEAVIATE_URL is
set (the same corpus, the same assertions).

A follow-up hop's query names the bridge entity; the engine returns the chunks that name it — one step over
the chunk–entity graph — ranked for the query's words, within the tenant and what the caller may see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

from adapters.search.embedded_entities import EmbeddedEntityIndex
from adapters.search.ingest import SourceDocument, ingest
from investigation.ports import SearchBackend
from tests.conformance.conftest import (
    ES_INDEX,
    WEAVIATE_COLLECTION,
    BackendSpec,
    _embedder,
    _env_settings,
    _external_names,
    _require_reachable,
)

Tenants = Callable[[str], str]

FILMS = [
    SourceDocument(id="night-train", title="Night Train",
                   text="Night Train is a 1990 thriller film directed by Ada Brennan and shot in Lisbon."),
    SourceDocument(id="ada-brennan", title="Ada Brennan",
                   text="Ada Brennan was born in Galway and studied painting before she turned to film."),
    SourceDocument(id="galway", title="Galway",
                   text="Galway is a harbour city in the west of Ireland; many writers were born there."),
    SourceDocument(id="brennan-notes", title="Production notes",
                   text="The producers kept the notes of Ada Brennan private: only the crew may read them.",
                   acl=("group:crew",)),
]


def make_embedded(index_dir: Path) -> SearchBackend:
    return EmbeddedEntityIndex(index_dir)


def make_elasticsearch_entities(index: str) -> SearchBackend:
    from adapters.search.elasticsearch import ElasticsearchEntities

    settings = _env_settings(elasticsearch_index=index, elasticsearch_replicas=0)
    return ElasticsearchEntities.from_settings(settings)


def make_weaviate_entities(collection: str, cache_dir: Path) -> SearchBackend:
    from adapters.search.weaviate import WeaviateEntities

    return WeaviateEntities.from_settings(_env_settings(weaviate_collection=collection), _embedder(cache_dir))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "entity_spec" in metafunc.fixturenames:
        metafunc.parametrize("entity_spec", ["embedded", *_external_names()], indirect=True)


@pytest.fixture()
def entity_spec(request: pytest.FixtureRequest, tmp_path: Path, embedding_cache: Path) -> BackendSpec:
    """The entity engine of one backend; a server's is on the suite's index/collection (dropped at the end
    of the session by conftest), reached as the backend of the same name."""
    if request.param == "embedded":
        return BackendSpec("embedded", partial(make_embedded, tmp_path / "index"))
    makers = {"elasticsearch": partial(make_elasticsearch_entities, ES_INDEX),
              "weaviate": partial(make_weaviate_entities, WEAVIATE_COLLECTION, embedding_cache)}
    spec = BackendSpec(request.param, makers[request.param])
    _require_reachable(spec)
    return spec


@pytest.fixture()
def engine(entity_spec: BackendSpec, tenant: Tenants) -> Iterator[tuple[SearchBackend, str, str]]:
    backend = entity_spec.make()
    films, other = tenant("films"), tenant("other")
    ingest(FILMS, tenant=films, backends=[backend])
    ingest(FILMS[:1], tenant=other, backends=[backend])
    yield backend, films, other
    close = getattr(backend, "close", None)
    if close is not None:
        close()


def test_the_chunks_naming_the_bridge_entity_ranked_for_the_question(
    engine: tuple[SearchBackend, str, str],
) -> None:
    backend, films, _ = engine
    hits = backend.search(films, "Where was Ada Brennan born?", 10, acl=[])
    # Galway's passage says "born" but names no Ada Brennan: the engine follows the entity, not the words.
    assert [p.source_id for p in hits] == ["ada-brennan", "night-train"]
    assert {p.engine for p in hits} == {backend.name}
    assert [p.rank for p in hits] == [1, 2]


def test_tenant_and_acl_hold(engine: tuple[SearchBackend, str, str]) -> None:
    backend, films, other = engine
    assert [p.source_id for p in backend.search(other, "Where was Ada Brennan born?", 10)] == ["night-train"]
    crew = {p.source_id for p in backend.search(films, "notes of Ada Brennan", 10, acl=["group:crew"])}
    assert "brennan-notes" in crew
    outsider = {p.source_id for p in backend.search(films, "notes of Ada Brennan", 10, acl=["user:bob"])}
    assert "brennan-notes" not in outsider and "ada-brennan" in outsider


def test_a_query_naming_no_entity_finds_nothing(engine: tuple[SearchBackend, str, str]) -> None:
    backend, films, _ = engine
    assert backend.search(films, "where was she born", 10) == []
