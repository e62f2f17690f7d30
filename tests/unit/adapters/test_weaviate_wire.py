"""Wire tests of the Weaviate adapter: the real v4 client talks to a scripted Weaviate on 127.0.0.1 —
REST (schema, tenants, meta) on an HTTP fake answering with documented bodies, gRPC (search, batch import,
batch delete, aggregate) on a real gRPC server built from the protobuf definitions the client ships. We
assert the requests as the server decoded them and the parsing of protobuf replies into passages."""

from __future__ import annotations

import hashlib
import struct
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
import pytest

from adapters.search import weaviate_schema as schema
from adapters.search._common import PUBLIC
from adapters.search.embedded_vector import chunk_embedding_text
from adapters.search.weaviate import WeaviateConfig, WeaviateEntities, WeaviateVector
from investigation.errors import PermanentError, TransientError, ValidationFailed
from investigation.state import Chunk, Visibility
from tests.unit.adapters.fixtures import weaviate_fake as wf
from tests.unit.adapters.fixtures.http_fake import Reply, load

DIM = 4


class RecordingEmbedder:
    """Deterministic 4-d unit vectors; remembers what it was asked to embed."""

    dim = DIM
    model_id = "test-4d"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += texts
        out = []
        for text in texts:
            raw = [b + 1.0 for b in hashlib.sha256(text.encode()).digest()[:DIM]]
            norm = sum(x * x for x in raw) ** 0.5
            out.append([x / norm for x in raw])
        return out


def fp32(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def chunk(source: str, position: int = 0, **extra: Any) -> Chunk:
    return Chunk(chunk_id=f"{source}#{position}", source_id=source, title=f"Title of {source}",
                 text=f"Text of {source} part {position}", position=position, **extra)


HITS = [
    {"chunk_id": "err-4021#0", "source_id": "err-4021", "title": "Mailbox sync fails with ERR_4021",
     "text": "ERR_4021 means the IMAP server rejected our connection.", "_distance": 0.18},
    {"chunk_id": "reset-password#0", "source_id": "reset-password", "title": "Resetting your password",
     "text": "Open the sign-in page.", "url": "https://help.acme.test/reset-password", "_distance": 0.42},
]


@pytest.fixture()
def fake() -> Iterator[wf.WeaviateFake]:
    yield from wf.serve()


@pytest.fixture()
def recorder() -> RecordingEmbedder:
    return RecordingEmbedder()


@pytest.fixture()
def vec(fake: wf.WeaviateFake, recorder: RecordingEmbedder) -> Iterator[WeaviateVector]:
    backend = WeaviateVector(WeaviateConfig(url=fake.url, grpc_port=fake.grpc_port, api_key="wv-key",
                                            grpc_host="127.0.0.1", batch_size=2, timeout=5), recorder)
    yield backend
    backend.close()


@pytest.fixture()
def known(fake: wf.WeaviateFake) -> wf.WeaviateFake:
    """The collection, of the current schema, and tenant "acme" already exist."""
    fake.collection_exists = True
    fake.properties = current_properties()
    fake.tenants.add("acme")
    return fake


def current_properties() -> list[dict[str, Any]]:
    """The properties as Weaviate reports them for a collection created from the current spec."""
    return [p._to_dict() for p in schema.collection_spec("SleuthChunk")["properties"]]


def test_first_write_creates_the_multi_tenant_collection_and_the_tenant(
    fake: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    fake.reply("BatchObjects", wf.batch_reply())
    assert vec.upsert("acme", [chunk("a")]) == 1

    (create,) = fake.rest.requests("POST", "/v1/schema")
    spec = create.json()
    assert spec["class"] == "SleuthChunk"
    assert spec["multiTenancyConfig"] == {
        "enabled": True,
        "autoTenantCreation": True,
        "autoTenantActivation": True,
    }
    assert spec["vectorConfig"] == {"default": {"vectorizer": {"none": {}}, "vectorIndexType": "hnsw",
                                                "vectorIndexConfig": {"distance": "cosine"}}}
    props = {p["name"]: p for p in spec["properties"]}
    assert set(props) == set(schema.PROPERTIES)
    assert props["acl"]["dataType"] == ["text[]"] and props["acl"]["tokenization"] == "field"
    assert props["source_id"]["indexSearchable"] is False and props["source_id"]["tokenization"] == "field"
    assert props["updated_at"]["dataType"] == ["date"] and props["text"]["tokenization"] == "word"
    assert props["entities"]["dataType"] == ["text[]"] and props["entities"]["tokenization"] == "field"
    assert props["entities"]["indexFilterable"] is True and props["entities"]["indexSearchable"] is False
    assert create.headers["authorization"] == "Bearer wv-key"
    (tenants,) = fake.rest.requests("POST", "/v1/schema/SleuthChunk/tenants")
    assert [t["name"] for t in tenants.json()] == ["acme"]

    # Second write, same process: neither the collection nor the tenant is checked again.
    vec.upsert("acme", [chunk("b")])
    assert [e.path for e in fake.rest.exchanges] == [
        "/v1/meta", "/v1/schema/SleuthChunk", "/v1/schema", "/v1/schema/SleuthChunk/tenants/acme",
        "/v1/schema/SleuthChunk/tenants"]


def test_batch_import_sends_our_vectors_deterministic_ids_and_properties(
    known: wf.WeaviateFake, vec: WeaviateVector, recorder: RecordingEmbedder
) -> None:
    known.reply("BatchObjects", wf.batch_reply())
    chunks = [chunk("a", 0, acl=("group:l2",), url="https://kb/a", updated_at="2024-05-01T10:00:00+02:00"),
              chunk("a", 1), chunk("b"), chunk("b")]  # b#0 twice: the last one wins
    assert vec.upsert("acme", chunks) == 3

    calls = known.grpc_calls("BatchObjects")
    assert [len(c.request.objects) for c in calls] == [2, 1]  # batch_size=2
    assert calls[0].metadata["authorization"] == "Bearer wv-key"
    first = calls[0].request.objects[0]
    assert (first.collection, first.tenant) == ("SleuthChunk", "acme")
    assert first.uuid == str(schema.object_id("acme", "a#0")) == str(
        uuid.uuid5(schema.NAMESPACE, "acme\x1fa#0"))
    # Bring-your-own vectors: exactly what the embedder returned for the embedded index's text of the chunk.
    assert recorder.texts == [chunk_embedding_text(c) for c in (chunks[0], chunks[1], chunks[3])]
    (named,) = first.vectors
    assert named.name == "default" and named.vector_bytes == fp32(recorder.embed([recorder.texts[0]])[0])
    props = dict(first.properties.non_ref_properties)  # a protobuf Struct
    assert (props["chunk_id"], props["source_id"], props["url"]) == ("a#0", "a", "https://kb/a")
    assert (props["title"], props["text"], props["position"]) == ("Title of a", "Text of a part 0", 0)
    assert props["updated_at"].startswith("2024-05-01T08:00:00")  # normalised to UTC
    assert [(a.prop_name, list(a.values)) for a in first.properties.text_array_properties] == [
        ("acl", ["group:l2"]), ("entities", ["title of a", "text"])]
    public = calls[0].request.objects[1]
    arrays = {a.prop_name: list(a.values) for a in public.properties.text_array_properties}
    assert arrays["acl"] == [PUBLIC]
    assert "url" not in public.properties.non_ref_properties


def test_reingest_writes_the_same_object_ids(known: wf.WeaviateFake, vec: WeaviateVector) -> None:
    known.reply("BatchObjects", wf.batch_reply())
    vec.upsert("acme", [chunk("a")])
    vec.upsert("acme", [chunk("a")])
    ids = [o.uuid for c in known.grpc_calls("BatchObjects") for o in c.request.objects]
    assert len(ids) == 2 and ids[0] == ids[1]
    assert schema.object_id("globex", "a#0") != schema.object_id("acme", "a#0")


def test_a_failed_object_is_reported_by_chunk_id(known: wf.WeaviateFake, vec: WeaviateVector) -> None:
    known.reply(
        "BatchObjects",
        wf.batch_reply({1: "invalid date property 'updated_at' on class 'SleuthChunk'"}),
        wf.batch_reply(),
    )
    with pytest.raises(PermanentError) as caught:
        vec.upsert("acme", [chunk("a"), chunk("b"), chunk("c")])
    assert "1 of 3 chunks were not stored" in str(caught.value) and "b#0" in str(caught.value)
    assert len(known.grpc_calls("BatchObjects")) == 2  # the other batch was still sent


def test_objects_failing_for_a_passing_reason_are_transient(
    known: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    known.reply(
        "BatchObjects", wf.batch_reply({0: "context deadline exceeded", 1: "context deadline exceeded"})
    )
    with pytest.raises(TransientError, match="2 of 2"):
        vec.upsert("acme", [chunk("a"), chunk("b")])


def test_a_tenant_created_meanwhile_by_another_process_is_fine(
    fake: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    fake.collection_exists = True
    answers = iter([Reply(404), Reply(200)])  # missing when we look, present once creation says 422
    fake.rest.route("HEAD", "/v1/schema/SleuthChunk/tenants/acme", lambda _: next(answers))
    fake.rest.route(
        "POST", "/v1/schema/SleuthChunk/tenants", Reply(422, load("weaviate/tenant_exists_422.json"))
    )
    fake.reply("BatchObjects", wf.batch_reply())
    assert vec.upsert("acme", [chunk("a")]) == 1


def test_tenant_names_weaviate_rejects_are_mapped_to_distinct_valid_names() -> None:
    assert schema.tenant_name("acme-1a2b_C3") == "acme-1a2b_C3"
    odd = [schema.tenant_name(t) for t in ("acme corp", "acme/corp", "ÉquipeØ", "x" * 80, "..")]
    assert len(set(odd)) == len(odd)
    assert all(schema._TENANT_OK.fullmatch(name) for name in odd)


def test_near_vector_search_filters_by_acl_inside_the_tenant(
    known: wf.WeaviateFake, vec: WeaviateVector, recorder: RecordingEmbedder
) -> None:
    known.reply("Search", wf.search_reply(HITS))
    passages = vec.search("acme", "mailbox sync error", 5, acl=["user:ann"])

    (call,) = known.grpc_calls("Search")
    request = call.request
    assert (request.collection, request.tenant, request.limit) == ("SleuthChunk", "acme", 5)
    assert request.filters.operator == request.filters.OPERATOR_CONTAINS_ANY
    assert request.filters.target.property == "acl"
    assert list(request.filters.value_text_array.values) == [PUBLIC, "user:ann"]
    assert list(request.near_vector.targets.target_vectors) == ["default"]
    assert request.near_vector.vectors[0].vector_bytes == fp32(recorder.embed(["mailbox sync error"])[0])
    assert set(request.properties.non_ref_properties) == set(schema.RETURNED)
    assert request.metadata.distance is True

    assert [p.chunk_id for p in passages] == ["err-4021#0", "reset-password#0"]
    assert [p.rank for p in passages] == [1, 2]
    assert [p.score for p in passages] == pytest.approx([0.82, 0.58])  # cosine similarity = 1 - distance
    assert {p.engine for p in passages} == {"weaviate"}
    assert passages[0].url is None and passages[1].url == "https://help.acme.test/reset-password"
    assert passages[0].text == HITS[0]["text"]


def test_a_customer_search_filters_by_acl_and_visibility_together(
    known: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    known.reply("Search", wf.search_reply([{**HITS[0], "visibility": "internal"}, HITS[1]]))
    passages = vec.search("acme", "mailbox sync error", 5, acl=[], visibility=[Visibility.PUBLIC])
    request = known.grpc_calls("Search")[0].request
    assert request.filters.operator == request.filters.OPERATOR_AND
    acl, visibility = request.filters.filters
    assert acl.target.property == "acl" and list(acl.value_text_array.values) == [PUBLIC]
    assert visibility.target.property == "visibility"
    assert list(visibility.value_text_array.values) == ["public"]
    assert "visibility" in set(request.properties.non_ref_properties)
    assert [p.visibility for p in passages] == [Visibility.INTERNAL, Visibility.PUBLIC]


def test_search_without_acl_sends_no_filter(known: wf.WeaviateFake, vec: WeaviateVector) -> None:
    known.reply("Search", wf.search_reply(HITS[:1]))
    vec.search("acme", "anything", 3)
    assert not known.grpc_calls("Search")[0].request.HasField("filters")


def test_an_unknown_tenant_has_nothing_and_costs_no_grpc_call(
    fake: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    fake.collection_exists = True
    assert vec.search("nobody", "password", 5) == []
    assert vec.count("nobody") == 0
    assert vec.delete("nobody", ["a"]) == 0
    assert fake.calls == []


def test_delete_by_source_id_filter_repeats_until_the_server_cap_is_not_hit(
    known: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    known.reply("BatchDelete", wf.delete_reply(10_000), wf.delete_reply(3))
    assert vec.delete("acme", ["b", "a", "a"]) == 10_003
    calls = known.grpc_calls("BatchDelete")
    assert len(calls) == 2 and calls[0].request.tenant == "acme"
    assert calls[0].request.filters.target.property == "source_id"
    assert list(calls[0].request.filters.value_text_array.values) == ["a", "b"]
    assert vec.delete("acme", []) == 0


def test_count_is_an_aggregate_over_the_tenant(known: wf.WeaviateFake, vec: WeaviateVector) -> None:
    known.reply("Aggregate", wf.count_reply(9))
    assert vec.count("acme") == 9
    request = known.grpc_calls("Aggregate")[0].request
    assert (request.collection, request.tenant, request.objects_count) == ("SleuthChunk", "acme", True)


@pytest.mark.parametrize("query", ["", "  ", "\t\n"])
def test_empty_queries_are_rejected_before_any_request(fake: wf.WeaviateFake, vec: WeaviateVector,
                                                       query: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        vec.search("acme", query, 5)
    assert caught.value.field == "query"
    assert fake.rest.exchanges == [] and fake.calls == []


@pytest.mark.parametrize(
    ("code", "details", "error"),
    [(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded", TransientError),
     (grpc.StatusCode.INVALID_ARGUMENT, ("invalid filter: no such prop with name 'acl' found in class "
                                        "'SleuthChunk'"), PermanentError),
     (grpc.StatusCode.PERMISSION_DENIED, "rbac: forbidden: read_data on collections/SleuthChunk",
      PermanentError)],
)
def test_grpc_failures_are_translated(known: wf.WeaviateFake, vec: WeaviateVector, code: grpc.StatusCode,
                                      details: str, error: type[Exception]) -> None:
    known.reply("Search", wf.GrpcFailure(code, details))
    with pytest.raises(error) as caught:
        vec.search("acme", "password", 3)
    assert isinstance(caught.value, TransientError) is (error is TransientError)
    assert details.split(":")[0] in str(caught.value)


def test_unavailable_is_retried_by_the_client_then_transient(
    known: wf.WeaviateFake, vec: WeaviateVector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("weaviate.retry.time.sleep", lambda _: None)  # the client backs off 1, 2, 4... s
    known.reply(
        "Search", wf.GrpcFailure(grpc.StatusCode.UNAVAILABLE, "connection reset"), wf.search_reply(HITS)
    )
    assert len(vec.search("acme", "password", 3)) == 2  # one UNAVAILABLE is absorbed by the client
    known.reply("Search", wf.GrpcFailure(grpc.StatusCode.UNAVAILABLE, "connection reset"))
    with pytest.raises(TransientError):
        vec.search("acme", "password", 3)


def test_rest_errors_are_translated(fake: wf.WeaviateFake, vec: WeaviateVector) -> None:
    fake.collection_exists = True
    fake.rest.route("HEAD", "/v1/schema/SleuthChunk/tenants/acme", Reply(503))
    with pytest.raises(TransientError):
        vec.count("acme")
    fake.rest.route("HEAD", "/v1/schema/SleuthChunk/tenants/acme", Reply(404))
    fake.rest.route(
        "POST", "/v1/schema/SleuthChunk/tenants", Reply(401, load("weaviate/unauthorized_401.json"))
    )
    with pytest.raises(PermanentError, match="401"):
        vec.upsert("acme", [chunk("a")])


def test_an_unreachable_weaviate_is_transient_and_ping_says_so(recorder: RecordingEmbedder) -> None:
    gone = wf.serve()
    fake = next(gone)
    url, port = fake.url, fake.grpc_port
    gone.close()  # both ports closed now
    backend = WeaviateVector(WeaviateConfig(url=url, grpc_port=port, timeout=2), recorder)
    with pytest.raises(TransientError):
        backend.count("acme")
    assert backend.ping() is False


def test_ping_asks_readiness(fake: wf.WeaviateFake, vec: WeaviateVector) -> None:
    assert vec.ping() is True
    assert fake.rest.requests("GET", "/v1/.well-known/ready")


def test_config_is_validated_eagerly() -> None:
    with pytest.raises(PermanentError):
        WeaviateConfig(url="weaviate:8080")
    with pytest.raises(PermanentError):
        WeaviateConfig(url="http://weaviate:8080", collection="chunks")


def test_config_from_settings_reads_the_documented_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from config.settings import Settings

    monkeypatch.setenv("WEAVIATE_URL", "https://weaviate.internal")
    monkeypatch.setenv("WEAVIATE_API_KEY", "wv-secret")
    monkeypatch.setenv("WEAVIATE_GRPC_PORT", "443")
    monkeypatch.setenv("SLEUTH_WEAVIATE_GRPC_HOST", "grpc.weaviate.internal")
    config = WeaviateConfig.from_settings(Settings())
    assert (config.url, config.api_key, config.grpc_port, config.grpc_host) == (
        "https://weaviate.internal", "wv-secret", 443, "grpc.weaviate.internal")


def test_a_collection_created_before_the_entity_property_gets_it_added(
    fake: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    fake.collection_exists = True
    fake.properties = [p for p in current_properties() if p["name"] != schema.ENTITY_PROPERTY]
    fake.tenants.add("acme")
    fake.reply("BatchObjects", wf.batch_reply())
    vec.upsert("acme", [chunk("a")])
    vec.upsert("acme", [chunk("b")])

    (added,) = fake.rest.requests("POST", "/v1/schema/SleuthChunk/properties")
    assert added.json()["name"] == "entities" and added.json()["dataType"] == ["text[]"]
    assert added.json()["tokenization"] == "field" and added.json()["indexFilterable"] is True
    assert fake.rest.requests("POST", "/v1/schema") == []  # the collection is not re-created


def test_a_collection_of_the_current_schema_is_left_as_it_is(
    known: wf.WeaviateFake, vec: WeaviateVector
) -> None:
    known.reply("BatchObjects", wf.batch_reply())
    vec.upsert("acme", [chunk("a")])
    assert known.rest.requests("POST") == []


def test_the_entity_engine_is_bm25_among_the_objects_naming_an_entity_of_the_query(
    known: wf.WeaviateFake, recorder: RecordingEmbedder
) -> None:
    known.reply("Search", wf.search_reply([{**HITS[0], "_score": 2.5}, {**HITS[1], "_score": 1.25}]))
    engine = WeaviateEntities(WeaviateConfig(url=known.url, grpc_port=known.grpc_port, grpc_host="127.0.0.1",
                                             timeout=5), recorder)
    passages = engine.search("acme", "Which label released the album by Mailbox Sync?", 4, acl=["user:ann"])
    engine.close()

    (call,) = known.grpc_calls("Search")
    request = call.request
    assert (request.collection, request.tenant, request.limit) == ("SleuthChunk", "acme", 4)
    assert request.bm25_search.query == "Which label released the album by Mailbox Sync?"
    assert list(request.bm25_search.properties) == ["title^2", "text"]
    assert request.filters.operator == request.filters.OPERATOR_AND
    named, acl = request.filters.filters
    assert named.operator == named.OPERATOR_CONTAINS_ANY and named.target.property == "entities"
    assert list(named.value_text_array.values) == ["mailbox sync"]
    assert acl.target.property == "acl" and list(acl.value_text_array.values) == [PUBLIC, "user:ann"]
    assert request.metadata.score is True
    assert recorder.texts == []  # BM25: nothing is embedded

    assert [p.chunk_id for p in passages] == ["err-4021#0", "reset-password#0"]
    assert [p.score for p in passages] == pytest.approx([2.5, 1.25])
    assert {p.engine for p in passages} == {"entities"}


def test_the_entity_engine_asks_nothing_of_a_query_that_names_no_entity(
    known: wf.WeaviateFake, recorder: RecordingEmbedder
) -> None:
    engine = WeaviateEntities(WeaviateConfig(url=known.url, grpc_port=known.grpc_port, grpc_host="127.0.0.1",
                                             timeout=5), recorder)
    assert engine.search("acme", "how do i reset my password", 4) == []
    engine.close()
    assert known.calls == []
