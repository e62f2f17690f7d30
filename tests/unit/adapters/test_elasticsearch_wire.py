"""Wire tests of the Elasticsearch adapter: the official client talks real HTTP to a scripted server on
127.0.0.1 that checks every request (method, path, parameters, headers, JSON/NDJSON body) and answers with
the response bodies the Elasticsearch REST API documents (fixtures/elasticsearch/*.json)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

import pytest

from adapters.search import es_schema
from adapters.search._common import PUBLIC
from adapters.search.elasticsearch import ElasticsearchConfig, ElasticsearchEntities, ElasticsearchLexical
from investigation.errors import PermanentError, TransientError, ValidationFailed
from investigation.state import Chunk, Visibility
from tests.unit.adapters.fixtures.http_fake import Exchange, FakeServer, Reply, load, serve

ALIAS = "sleuth-chunks"
INDEX = "sleuth-chunks-v1"  # what the recorded get_alias fixture names as the current index
CURRENT = f"sleuth-chunks-v{es_schema.SCHEMA_VERSION}"  # what a first use creates
MAJOR = version("elasticsearch").split(".")[0]
# Every 2xx answer of a real cluster carries this header; the client refuses to talk to anything else.
PRODUCT = {"X-Elastic-Product": "Elasticsearch"}
ITEMS = load("elasticsearch/bulk_items.json")
BULK = "PUT|POST"  # the bulk API takes either; the 9.x client sends PUT


def chunk(source: str, position: int = 0, **extra: Any) -> Chunk:
    return Chunk(chunk_id=f"{source}#{position}", source_id=source, title=f"Title of {source}",
                 text=f"Text of {source} part {position}", position=position, **extra)


def bulk_reply(outcomes: dict[str, str] | None = None) -> Any:
    """A `_bulk` response for the request: every item `created` unless `outcomes[chunk_id]` names another
    documented item result (`parse_error`, `rejected`)."""
    outcomes = outcomes or {}

    def respond(request: Exchange) -> Reply:
        lines = request.ndjson()
        items, errors = [], False
        for action, source in zip(lines[::2], lines[1::2], strict=True):
            kind = outcomes.get(source["chunk_id"], "created")
            item = copy.deepcopy(ITEMS[kind])
            item["_id"] = action["index"]["_id"]
            errors |= kind != "created"
            items.append({"index": item})
        return Reply(200, {"took": 30, "errors": errors, "items": items})

    return respond


@pytest.fixture()
def es() -> Iterator[FakeServer]:
    yield from serve(PRODUCT)


@pytest.fixture()
def ready(es: FakeServer) -> FakeServer:
    """A cluster on which the alias already exists, on an index of the current mapping."""
    es.route("HEAD", f"/_alias/{ALIAS}", Reply(200))
    es.route("GET", f"/{ALIAS}/_mapping", Reply(200, load("elasticsearch/get_mapping.json")))
    return es


def backend(server: FakeServer, **overrides: Any) -> ElasticsearchLexical:
    config = {"url": server.url, "max_retries": 0, "bulk_backoff": 0.01, **overrides}
    return ElasticsearchLexical(ElasticsearchConfig(**config))


def test_first_use_creates_the_versioned_index_with_its_mappings_behind_the_alias(es: FakeServer) -> None:
    es.route("HEAD", f"/_alias/{ALIAS}", Reply(404))
    es.route("PUT", f"/{CURRENT}", Reply(200, load("elasticsearch/create_index.json")))
    es.route("POST", f"/{ALIAS}/_count", Reply(200, load("elasticsearch/count.json")))
    b = backend(es, api_key="VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==", replicas=0)

    assert b.count("acme") == 9
    assert b.count("globex") == 9  # the index is checked once per process, not per call

    create = es.requests("PUT")[0]
    body = create.json()
    assert body["aliases"] == {ALIAS: {"is_write_index": True}}
    assert body["settings"]["number_of_replicas"] == 0 and body["settings"]["number_of_shards"] == 1
    mapping = body["mappings"]
    assert mapping["dynamic"] == "strict" and mapping["_meta"]["schema_version"] == es_schema.SCHEMA_VERSION
    props = mapping["properties"]
    assert {k: props[k]["type"] for k in props} == {
        "tenant_id": "keyword",
        "chunk_id": "keyword",
        "source_id": "keyword",
        "title": "text",
        "text": "text",
        "url": "keyword",
        "acl": "keyword",
        "visibility": "keyword",
        "updated_at": "date",
        "position": "integer",
        "entities": "keyword",
    }
    assert props["text"]["analyzer"] == props["title"]["analyzer"] == "english"
    assert props["title"]["fields"]["keyword"]["type"] == "keyword"
    assert props["text"]["fields"]["ids"]["analyzer"] == "sleuth_identifier"
    assert "sleuth_identifier" in body["settings"]["analysis"]["analyzer"]
    # What the client puts on the wire: compatibility media type of its major version, and the API key.
    assert create.headers["content-type"] == f"application/vnd.elasticsearch+json; compatible-with={MAJOR}"
    assert create.headers["authorization"].startswith("ApiKey ")
    assert [e.method for e in es.exchanges] == ["HEAD", "PUT", "POST", "POST"]


def test_an_index_of_an_older_schema_gets_the_entity_field_added_in_place(es: FakeServer) -> None:
    es.route("HEAD", f"/_alias/{ALIAS}", Reply(200))
    es.route("GET", f"/{ALIAS}/_mapping", Reply(200, load("elasticsearch/get_mapping_v2.json")))
    es.route("PUT", "/sleuth-chunks-v2/_mapping", Reply(200, load("elasticsearch/acknowledged.json")))
    es.route("POST", f"/{ALIAS}/_count", Reply(200, load("elasticsearch/count.json")))

    assert backend(es).count("acme") == 9

    put = es.requests("PUT")
    assert len(put) == 1 and put[0].path == "/sleuth-chunks-v2/_mapping"  # the index, not the alias
    assert put[0].json() == {"properties": {"entities": {"type": "keyword"}},
                             "_meta": {"schema_version": es_schema.SCHEMA_VERSION, "owner": "sleuth"}}
    assert es.unrouted == []


def test_an_index_of_the_current_schema_is_left_as_it_is(ready: FakeServer) -> None:
    ready.route("POST", f"/{ALIAS}/_count", Reply(200, load("elasticsearch/count.json")))
    assert backend(ready).count("acme") == 9
    assert [(e.method, e.path) for e in ready.exchanges] == [
        ("HEAD", f"/_alias/{ALIAS}"), ("GET", f"/{ALIAS}/_mapping"), ("POST", f"/{ALIAS}/_count")]


def test_a_concurrent_creator_winning_the_race_is_not_an_error(es: FakeServer) -> None:
    es.route("HEAD", f"/_alias/{ALIAS}", Reply(404))
    es.route("PUT", f"/{CURRENT}", Reply(400, load("elasticsearch/index_already_exists_400.json")))
    es.route("POST", f"/{ALIAS}/_count", Reply(200, load("elasticsearch/count.json")))
    assert backend(es).count("acme") == 9


def test_bulk_ingest_sends_ndjson_index_actions_in_chunks(ready: FakeServer) -> None:
    ready.route(BULK, "/_bulk", bulk_reply())
    b = backend(ready, bulk_chunk=2, username="elastic", password="s3cret")
    chunks = [chunk("a", 0, acl=("group:l2",), url="https://kb/a", updated_at="2024-05-01"),
              chunk("a", 1), chunk("b"), chunk("c"), chunk("c")]  # c#0 twice: the last one wins

    assert b.upsert("acme", chunks) == 4

    bulks = ready.requests(BULK, "/_bulk")
    assert [len(r.ndjson()) // 2 for r in bulks] == [2, 2]
    first = bulks[0]
    assert first.param("refresh") == "wait_for"
    assert first.headers["content-type"] == f"application/vnd.elasticsearch+x-ndjson; compatible-with={MAJOR}"
    assert first.headers["authorization"] == "Basic " + base64.b64encode(b"elastic:s3cret").decode()
    assert first.body.endswith(b"\n")  # NDJSON: every line, the last one too, ends with a newline
    action, source = first.ndjson()[:2]
    assert action == {"index": {"_index": ALIAS, "_id": es_schema.doc_id("acme", "a#0")}}
    assert source == {"tenant_id": "acme", "chunk_id": "a#0", "source_id": "a", "title": "Title of a",
                      "text": "Text of a part 0", "acl": ["group:l2"], "position": 0, "url": "https://kb/a",
                      "updated_at": "2024-05-01T00:00:00Z", "visibility": "public",
                      "entities": ["title of a", "text"]}
    public = first.ndjson()[3]
    assert public["acl"] == [PUBLIC] and "url" not in public and "updated_at" not in public


def test_same_chunk_in_two_tenants_gets_two_documents() -> None:
    assert es_schema.doc_id("acme", "a#0") != es_schema.doc_id("globex", "a#0")
    assert es_schema.doc_id("acme", "a#0") == es_schema.doc_id("acme", "a#0")


def test_a_refused_bulk_item_is_reported_not_dropped(ready: FakeServer) -> None:
    ready.route(BULK, "/_bulk", bulk_reply({"b#0": "parse_error"}))
    with pytest.raises(PermanentError) as caught:
        backend(ready).upsert("acme", [chunk("a"), chunk("b"), chunk("c")])
    message = str(caught.value)
    assert "1 of 3 chunks were not stored" in message
    assert "b#0" in message and "document_parsing_exception" in message
    assert not isinstance(caught.value, TransientError)


def test_rejected_items_are_retried_alone_with_backoff_then_stored(ready: FakeServer) -> None:
    ready.route(BULK, "/_bulk", bulk_reply({"b#0": "rejected"}), bulk_reply())
    assert backend(ready).upsert("acme", [chunk("a"), chunk("b"), chunk("c")]) == 3
    retry = ready.requests(BULK, "/_bulk")[1]
    assert [line["chunk_id"] for line in retry.ndjson()[1::2]] == ["b#0"]


def test_items_rejected_on_every_attempt_are_a_transient_failure(ready: FakeServer) -> None:
    ready.route(BULK, "/_bulk", bulk_reply({"b#0": "rejected"}))
    with pytest.raises(TransientError, match="es_rejected_execution_exception"):
        backend(ready, bulk_retries=2).upsert("acme", [chunk("a"), chunk("b")])
    assert len(ready.requests(BULK, "/_bulk")) == 3


def test_search_filters_by_tenant_and_acl_and_parses_hits(ready: FakeServer) -> None:
    ready.route("POST", f"/{ALIAS}/_search", Reply(200, load("elasticsearch/search.json")))
    passages = backend(ready).search("acme", "sync fails with ERR_4021", 5, acl=["user:ann", "group:l2"])

    body = ready.requests("POST", f"/{ALIAS}/_search")[0].json()
    query = body["query"]["bool"]
    assert query["filter"] == [{"term": {"tenant_id": "acme"}},
                               {"terms": {"acl": [PUBLIC, "user:ann", "group:l2"]}}]
    assert query["minimum_should_match"] == 1
    multi = query["should"][0]["multi_match"]
    assert multi["query"] == "sync fails with ERR_4021" and multi["fields"] == ["title^2", "text"]
    exact = query["should"][1:]
    assert {"match": {"text.ids": {"query": "ERR_4021", "boost": es_schema.IDENTIFIER_BOOST}}} in exact
    assert {"match_phrase": {"text": {"query": "ERR_4021"}}} in exact
    assert body["size"] == 5
    assert body["_source"] == es_schema.SOURCE_FIELDS

    assert [p.chunk_id for p in passages] == ["err-4021#0", "reset-password#0"]
    assert [p.rank for p in passages] == [1, 2]
    first, second = passages
    assert first.score == pytest.approx(7.4193463) and first.engine == "elasticsearch"
    assert first.url is None and second.url == "https://help.acme.test/reset-password"


def test_plain_search_has_no_acl_clause_when_acl_is_none_and_no_highlight(ready: FakeServer) -> None:
    ready.route("POST", f"/{ALIAS}/_search", Reply(200, load("elasticsearch/search.json")))
    passages = backend(ready).search("acme", "password reset", 2)
    body = ready.requests("POST", f"/{ALIAS}/_search")[0].json()
    assert body["query"]["bool"]["filter"] == [{"term": {"tenant_id": "acme"}}]
    assert len(body["query"]["bool"]["should"]) == 1  # no identifier in the query: BM25 only
    assert "highlight" not in body and "from" not in body
    assert [p.rank for p in passages] == [1, 2]


def test_an_empty_acl_sees_public_chunks_only(ready: FakeServer) -> None:
    ready.route("POST", f"/{ALIAS}/_search", Reply(200, load("elasticsearch/search.json")))
    backend(ready).search("acme", "password", 2, acl=[])
    body = ready.requests("POST", f"/{ALIAS}/_search")[0].json()
    assert body["query"]["bool"]["filter"][1] == {"terms": {"acl": [PUBLIC]}}


def test_a_customer_search_filters_by_visibility_and_passages_carry_it(ready: FakeServer) -> None:
    found = load("elasticsearch/search.json")
    found["hits"]["hits"][0]["_source"]["visibility"] = "internal"
    ready.route("POST", f"/{ALIAS}/_search", Reply(200, found))
    passages = backend(ready).search("acme", "password", 2, acl=[], visibility=[Visibility.PUBLIC])
    body = ready.requests("POST", f"/{ALIAS}/_search")[0].json()
    assert body["query"]["bool"]["filter"] == [{"term": {"tenant_id": "acme"}},
                                               {"terms": {"acl": [PUBLIC]}},
                                               {"terms": {"visibility": ["public"]}}]
    assert "visibility" in body["_source"]
    assert passages[0].visibility is Visibility.INTERNAL  # what the engine returned is reported as is
    assert all(p.visibility is Visibility.PUBLIC for p in passages[1:])  # a chunk without one: public


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_queries_are_rejected_before_any_request(es: FakeServer, query: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        backend(es).search("acme", query, 5)
    assert caught.value.field == "query"
    assert es.exchanges == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [("ERR_4021 when syncing", ["ERR_4021"]), ('invoice "INV-2024-001"?', ["INV-2024-001"]),
     ("upgrade to v2.3.1 (or ERR_TIMEOUT)", ["v2.3.1", "ERR_TIMEOUT"]), ("Fehlercode Ω-17", ["Ω-17"]),
     ("two-factor sign-in e-mail", []), ("HTTP 429 too many", []), ("__public__", [])],
)
def test_identifier_detection(query: str, expected: list[str]) -> None:
    assert es_schema.identifiers(query) == expected


def test_delete_by_query_is_scoped_to_the_tenant(ready: FakeServer) -> None:
    ready.route("POST", f"/{ALIAS}/_delete_by_query", Reply(200, load("elasticsearch/delete_by_query.json")))
    b = backend(ready)
    assert b.delete("acme", ["b", "a", "a"]) == 2
    assert b.delete("acme", []) == 0
    (request,) = ready.requests("POST", f"/{ALIAS}/_delete_by_query")
    assert request.param("refresh") == "true"
    assert request.json() == {"query": {"bool": {"filter": [{"term": {"tenant_id": "acme"}},
                                                            {"terms": {"source_id": ["a", "b"]}}]}}}


def test_count_is_scoped_to_the_tenant(ready: FakeServer) -> None:
    ready.route("POST", f"/{ALIAS}/_count", Reply(200, load("elasticsearch/count.json")))
    assert backend(ready).count("acme") == 9
    assert ready.requests("POST")[0].json() == {
        "query": {"bool": {"filter": [{"term": {"tenant_id": "acme"}}]}}
    }


def test_reindex_builds_a_new_index_then_swaps_the_alias_atomically(es: FakeServer) -> None:
    es.route("GET", f"/_alias/{ALIAS}", Reply(200, load("elasticsearch/get_alias.json")))
    es.route("PUT", "/sleuth-chunks-v2", Reply(200, {**load("elasticsearch/create_index.json"),
                                                     "index": "sleuth-chunks-v2"}))
    es.route("POST", "/_reindex", Reply(200, load("elasticsearch/reindex.json")))
    es.route("POST", "/_aliases", Reply(200, load("elasticsearch/acknowledged.json")))

    assert backend(es).reindex("sleuth-chunks-v2") == "sleuth-chunks-v2"

    assert "aliases" not in es.requests("PUT")[0].json()  # the alias moves only once the copy is complete
    copy_request = es.requests("POST", "/_reindex")[0]
    assert copy_request.json() == {"source": {"index": ALIAS}, "dest": {"index": "sleuth-chunks-v2"}}
    assert copy_request.param("wait_for_completion") == "true"
    assert es.requests("POST", "/_aliases")[0].json() == {"actions": [
        {"remove": {"index": INDEX, "alias": ALIAS}},
        {"add": {"index": "sleuth-chunks-v2", "alias": ALIAS, "is_write_index": True}}]}


@pytest.mark.parametrize(
    ("status", "fixture", "error", "retry_after"),
    [
        (429, "rejected_429.json", TransientError, 7.0),
        (503, "unavailable_503.json", TransientError, None),
        (400, "parsing_exception_400.json", PermanentError, None),
        (401, "security_401.json", PermanentError, None),
    ],
)
def test_http_errors_are_translated_after_the_clients_own_retries(
    ready: FakeServer, status: int, fixture: str, error: type[Exception], retry_after: float | None
) -> None:
    headers = {"Retry-After": "7"} if retry_after else {}
    ready.route("POST", f"/{ALIAS}/_search", Reply(status, load(f"elasticsearch/{fixture}"), headers))
    with pytest.raises(error) as caught:
        backend(ready, max_retries=2).search("acme", "password", 3)
    retried = status in (429, 503)
    assert len(ready.requests("POST", f"/{ALIAS}/_search")) == (3 if retried else 1)
    assert isinstance(caught.value, TransientError) is retried
    assert f"HTTP {status}" in str(caught.value)
    assert load(f"elasticsearch/{fixture}")["error"]["type"] in str(caught.value)
    if retried:
        assert isinstance(caught.value, TransientError) and caught.value.retry_after == retry_after


def test_an_unreachable_cluster_is_transient_and_ping_says_so() -> None:
    with FakeServer(PRODUCT) as gone:
        url = gone.url  # a port that was open a moment ago and is closed now
    b = ElasticsearchLexical(ElasticsearchConfig(url=url, max_retries=1, request_timeout=2))
    with pytest.raises(TransientError, match="ConnectionError"):
        b.count("acme")
    assert b.ping() is False


def test_ping_is_a_head_request_on_the_root(es: FakeServer) -> None:
    es.route("HEAD", "/", Reply(200))
    assert backend(es).ping() is True
    assert [(e.method, e.path) for e in es.exchanges] == [("HEAD", "/")]


def test_a_server_that_is_not_elasticsearch_is_refused(es: FakeServer) -> None:
    es.default_headers = {}  # no X-Elastic-Product: the client's product check must refuse it
    es.route("POST", f"/{ALIAS}/_count", Reply(200, load("elasticsearch/count.json")))
    es.route("HEAD", f"/_alias/{ALIAS}", Reply(200))
    with pytest.raises(PermanentError):
        backend(es).count("acme")


def test_config_is_validated_eagerly() -> None:
    with pytest.raises(PermanentError):
        ElasticsearchConfig(url="elasticsearch:9200")
    with pytest.raises(PermanentError):
        ElasticsearchConfig(url="http://es:9200", api_key="k", username="u")
    with pytest.raises(PermanentError):
        ElasticsearchConfig(url="http://es:9200", index="Sleuth")


def test_config_from_settings_reads_the_documented_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from config.settings import Settings

    monkeypatch.setenv("ELASTICSEARCH_URL", "https://es.internal:9200")
    monkeypatch.setenv("ELASTICSEARCH_API_KEY", "a2V5")
    monkeypatch.setenv("SLEUTH_ELASTICSEARCH_INDEX", "kb-chunks")
    monkeypatch.setenv("SLEUTH_ELASTICSEARCH_CA_CERTS", "/etc/ssl/es-ca.pem")
    config = ElasticsearchConfig.from_settings(Settings())
    assert (config.url, config.api_key, config.index, str(config.ca_certs)) == (
        "https://es.internal:9200", "a2V5", "kb-chunks", "/etc/ssl/es-ca.pem")
    assert json.dumps(config.__dict__, default=str)  # plain values only: safe to hand to a child process


def test_ingested_chunks_carry_their_entity_keys(ready: FakeServer) -> None:
    ready.route(BULK, "/_bulk", bulk_reply())
    text = 'The album "Abbey Road" was recorded by The Beatles in London; error WG-1001 aside.'
    backend(ready).upsert("acme", [Chunk(chunk_id="c#0", source_id="c", title="Abbey Road", text=text)])
    source = ready.requests(BULK, "/_bulk")[0].ndjson()[1]
    assert source["entities"] == ["abbey road", "beatles in london", "wg 1001"]  # the title first


def test_the_entity_engine_sends_a_terms_query_on_the_entity_field_with_bm25_of_the_query(
    ready: FakeServer,
) -> None:
    ready.route("POST", f"/{ALIAS}/_search", Reply(200, load("elasticsearch/search.json")))
    engine = ElasticsearchEntities(ElasticsearchConfig(url=ready.url, max_retries=0))
    passages = engine.search("acme", "Which label released the album by Mailbox Sync?", 4, acl=["user:ann"])

    body = ready.requests("POST", f"/{ALIAS}/_search")[0].json()
    query = body["query"]["bool"]
    assert query["filter"] == [{"term": {"tenant_id": "acme"}}, {"terms": {"acl": [PUBLIC, "user:ann"]}}]
    assert query["must"] == [{"terms": {"entities": ["mailbox sync"], "boost": es_schema.ENTITY_BOOST}}]
    assert query["should"][0]["multi_match"]["query"] == "Which label released the album by Mailbox Sync?"
    assert body["size"] == 4 and body["_source"] == es_schema.SOURCE_FIELDS
    assert [p.chunk_id for p in passages] == ["err-4021#0", "reset-password#0"]
    assert {p.engine for p in passages} == {"entities"}


def test_the_entity_engine_asks_nothing_of_a_query_that_names_no_entity(ready: FakeServer) -> None:
    engine = ElasticsearchEntities(ElasticsearchConfig(url=ready.url, max_retries=0))
    assert engine.search("acme", "how do i reset my password", 4) == []
    assert ready.requests("POST") == []
