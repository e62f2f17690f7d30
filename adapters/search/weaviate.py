"""Weaviate behind the `SearchBackend` port: the vector engine of the production setup.

One multi-tenant collection per deployment; a Sleuth tenant is a Weaviate tenant (created on first write),
so isolation is Weaviate's own, and the ACL is a filter on every query. Vectors are brought by us from the
same MiniLM embedder as the embedded index, so scores are comparable and switching engines never needs a
re-embedding. Schema and tenants go over REST, search and batch import over gRPC (client v4).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from adapters.search import weaviate_schema as schema
from adapters.search._common import ItemFailure, check_query, check_tenant, raise_for_failures
from adapters.search._translate import retryable_message, translate_weaviate
from adapters.search.embedded_vector import chunk_embedding_text
from adapters.search.embedder import embed_matrix
from investigation.entities import ENGINE as ENTITY_ENGINE
from investigation.entities import entities
from investigation.errors import PermanentError, SleuthError, TransientError
from investigation.ports import Embedder
from investigation.state import Chunk, Passage, Visibility

if TYPE_CHECKING:
    from weaviate import WeaviateClient
    from weaviate.collections import Collection

    from config.settings import Settings

log = logging.getLogger("sleuth.search.weaviate")
DELETE_TERMS = 1000  # source ids per delete_many filter
TITLE_BOOST = 2  # the entities engine's BM25 over title^2 and text, as Elasticsearch's
QUERY_MAXIMUM_RESULTS = 10_000  # Weaviate's default cap on objects one delete_many removes


@dataclass(frozen=True)
class WeaviateConfig:
    """How to reach Weaviate and which collection to use (built from `Settings`, validated eagerly)."""

    url: str
    collection: str = "SleuthChunk"
    api_key: str | None = None
    grpc_port: int = 50051
    grpc_host: str | None = None  # default: the REST host
    timeout: float = 30.0
    batch_size: int = 200

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PermanentError(f"WEAVIATE_URL must be an http(s) URL, got {self.url!r}")
        try:
            schema.check_collection_name(self.collection)
        except ValueError as exc:
            raise PermanentError(str(exc)) from exc
        if self.batch_size < 1 or self.timeout <= 0:
            raise PermanentError("Weaviate batch_size >= 1 and timeout > 0")

    @classmethod
    def from_settings(cls, settings: Settings) -> WeaviateConfig:
        if not settings.engines.weaviate_url:
            raise PermanentError("vector_backend is weaviate but WEAVIATE_URL is not set")
        key = settings.engines.weaviate_api_key
        return cls(
            url=settings.engines.weaviate_url,
            collection=settings.engines.weaviate_collection,
            api_key=key.get_secret_value() if key else None,
            grpc_port=settings.engines.weaviate_grpc_port,
            grpc_host=settings.engines.weaviate_grpc_host,
            timeout=settings.engines.weaviate_timeout,
            batch_size=settings.engines.weaviate_batch_size,
        )


class WeaviateVector:
    """Cosine near-vector search over one multi-tenant collection, ACL-filtered inside `search`."""

    name = "weaviate"

    def __init__(self, config: WeaviateConfig, embedder: Embedder) -> None:
        self.config = config
        self.embedder = embedder
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._client: WeaviateClient | None = None
        self._collection_ready = False
        self._tenants: set[str] = set()  # known to exist (removed only by `delete_tenant`)

    @classmethod
    def from_settings(cls, settings: Settings, embedder: Embedder) -> WeaviateVector:
        return cls(WeaviateConfig.from_settings(settings), embedder)

    # -- port ---------------------------------------------------------------------------------------

    def upsert(self, tenant: str, chunks: Sequence[Chunk]) -> int:
        check_tenant(tenant)
        latest = {c.chunk_id: c for c in chunks}  # last one wins within a batch
        if not latest:
            return 0
        from weaviate.classes.data import DataObject
        from weaviate.exceptions import WeaviateInsertManyAllFailedError

        items = list(latest.values())
        # Embed before any I/O: it is the slow part.
        vectors = embed_matrix(self.embedder, [chunk_embedding_text(c) for c in items]).tolist()
        stored, failures = 0, []
        with self._errors("batch import"):
            data = self._collection().with_tenant(self._ensure_tenant(tenant)).data
            for start in range(0, len(items), self.config.batch_size):
                batch = items[start:start + self.config.batch_size]
                objects = [
                    DataObject(
                        properties=schema.properties(c),
                        uuid=schema.object_id(tenant, c.chunk_id),
                        vector={schema.VECTOR: vectors[start + i]},
                    )
                    for i, c in enumerate(batch)
                ]
                try:
                    result = data.insert_many(objects)
                except WeaviateInsertManyAllFailedError as exc:  # the client's way of saying "all of them"
                    failures += [
                        ItemFailure(c.chunk_id, exc.message[:300], retryable_message(exc.message))
                        for c in batch
                    ]
                    continue
                for index, error in result.errors.items():
                    failures.append(ItemFailure(batch[index].chunk_id, str(error.message)[:300],
                                                retryable_message(str(error.message))))
                stored += len(batch) - len(result.errors)
        raise_for_failures(self.name, failures, len(items))
        return stored

    def delete(self, tenant: str, source_ids: Sequence[str]) -> int:
        check_tenant(tenant)
        ids = sorted(set(source_ids))
        if not ids:
            return 0
        deleted = 0
        with self._errors("delete"):
            name = schema.tenant_name(tenant)
            if not self._tenant_exists(name):
                return 0
            data = self._collection().with_tenant(name).data
            for start in range(0, len(ids), DELETE_TERMS):
                where = schema.source_filter(ids[start:start + DELETE_TERMS])
                while True:  # one call removes at most QUERY_MAXIMUM_RESULTS objects
                    result = data.delete_many(where=where)
                    if result.failed:
                        raise TransientError(f"weaviate delete: {result.failed} objects could not be deleted")
                    deleted += result.successful
                    if result.matches < QUERY_MAXIMUM_RESULTS or not result.successful:
                        break
        return deleted

    def delete_tenant(self, tenant: str) -> int:
        """Every object of `tenant` (tenant removal): its Weaviate tenant (a shard of its own) is dropped."""
        check_tenant(tenant)
        with self._errors("delete tenant"):
            name = schema.tenant_name(tenant)
            if not self._tenant_exists(name):
                return 0
            count = self.count(tenant)
            self._collection().tenants.remove([name])
            self._tenants.discard(name)
            return count

    def search(self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
               visibility: Sequence[Visibility] | None = None) -> list[Passage]:
        check_tenant(tenant)
        check_query(query)
        if k <= 0:
            return []
        from weaviate.classes.query import MetadataQuery

        vector = embed_matrix(self.embedder, [query], persist=False)[0].tolist()
        with self._errors("search"):
            name = schema.tenant_name(tenant)
            if not self._tenant_exists(name):
                return []
            response = self._collection().with_tenant(name).query.near_vector(
                near_vector=vector, target_vector=schema.VECTOR, limit=k,
                filters=schema.acl_filter(acl, visibility),
                return_metadata=MetadataQuery(distance=True), return_properties=schema.RETURNED,
            )
        # Cosine distance = 1 - cosine similarity: the score is the embedded index's score, comparable.
        return [schema.passage(o, engine=self.name, rank=rank, score=1.0 - float(o.metadata.distance or 0.0))
                for rank, o in enumerate(response.objects, start=1)]

    def count(self, tenant: str) -> int:
        check_tenant(tenant)
        with self._errors("count"):
            name = schema.tenant_name(tenant)
            if not self._tenant_exists(name):
                return 0
            result = self._collection().with_tenant(name).aggregate.over_all(total_count=True)
        return int(result.total_count or 0)

    def ping(self) -> bool:
        try:
            return bool(self._get_client().is_ready())
        except Exception:
            log.warning("weaviate ping failed", exc_info=True)
            return False

    def drop(self) -> None:
        """Delete the collection with every tenant in it (test teardown, decommissioning)."""
        with self._errors("drop"):
            self._get_client().collections.delete(self.config.collection)
        self._collection_ready, self._tenants = False, set()

    def close(self) -> None:
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                self._client.close()
            self._client, self._pid = None, None
            self._collection_ready, self._tenants = False, set()

    # -- internals ----------------------------------------------------------------------------------

    def _get_client(self) -> WeaviateClient:
        pid = os.getpid()
        with self._lock:
            if self._client is None or self._pid != pid:
                # A client inherited over fork shares the parent's gRPC channel: never use it.
                self._client, self._pid = None, None
                self._collection_ready, self._tenants = False, set()
                with self._errors("connect"):
                    self._client = self._connect()
                self._pid = pid
            return self._client

    def _connect(self) -> WeaviateClient:
        import weaviate
        from weaviate.classes.init import AdditionalConfig, Auth, Timeout

        cfg = self.config
        rest = urlsplit(cfg.url)
        secure = rest.scheme == "https"
        return weaviate.connect_to_custom(
            http_host=rest.hostname or "", http_port=rest.port or (443 if secure else 80), http_secure=secure,
            grpc_host=cfg.grpc_host or rest.hostname or "", grpc_port=cfg.grpc_port, grpc_secure=secure,
            auth_credentials=Auth.api_key(cfg.api_key) if cfg.api_key else None,
            additional_config=AdditionalConfig(timeout=Timeout(init=min(cfg.timeout, 10.0), query=cfg.timeout,
                                                               insert=cfg.timeout)),
            # The init checks would also ask PyPI for the latest client version from every worker.
            skip_init_checks=True,
        )

    def _collection(self) -> Collection[Any, Any]:
        client = self._get_client()
        if not self._collection_ready:
            from weaviate.exceptions import UnexpectedStatusCodeError

            name = self.config.collection
            if not client.collections.exists(name):
                try:
                    client.collections.create(**schema.collection_spec(name))
                except UnexpectedStatusCodeError as exc:  # another process created it first
                    if exc.status_code != 422 or not client.collections.exists(name):
                        raise
            else:
                self._add_missing_properties(client.collections.get(name))
            self._collection_ready = True
        return client.collections.get(self.config.collection)

    @staticmethod
    def _add_missing_properties(collection: Collection[Any, Any]) -> None:
        """A collection created before `entities` gets it, in place (its objects: once ingested again)."""
        from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateInvalidInputError

        try:
            collection.config.add_property(schema.entity_property())
        except WeaviateInvalidInputError:  # the client read the schema: the property is there
            pass
        except UnexpectedStatusCodeError as exc:  # added meanwhile by another process
            if exc.status_code != 422:
                raise

    def _tenant_exists(self, name: str) -> bool:
        if name in self._tenants:
            return True
        if self._collection().tenants.exists(name):
            self._tenants.add(name)
            return True
        return False

    def _ensure_tenant(self, tenant: str) -> str:
        from weaviate.classes.tenants import Tenant
        from weaviate.exceptions import UnexpectedStatusCodeError

        name = schema.tenant_name(tenant)
        if not self._tenant_exists(name):
            try:
                self._collection().tenants.create([Tenant(name=name)])
            except UnexpectedStatusCodeError as exc:  # created meanwhile by another process
                if exc.status_code != 422 or not self._collection().tenants.exists(name):
                    raise
            self._tenants.add(name)
        return name

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except SleuthError:
            raise
        except Exception as exc:
            raise translate_weaviate(exc, action) from exc


class WeaviateEntities(WeaviateVector):
    """The `entities` engine on the same collection: BM25 of the query over title^2 and text among the
    objects whose `entities` contain one the query names (one step over the chunk–entity graph)."""

    name = ENTITY_ENGINE

    @classmethod
    def from_settings(cls, settings: Settings, embedder: Embedder) -> WeaviateEntities:
        return cls(WeaviateConfig.from_settings(settings), embedder)

    def search(self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
               visibility: Sequence[Visibility] | None = None) -> list[Passage]:
        check_tenant(tenant)
        check_query(query)
        if k <= 0:
            return []
        from weaviate.classes.query import MetadataQuery

        keys = entities(query)
        if not keys:
            return []
        with self._errors("search"):
            name = schema.tenant_name(tenant)
            if not self._tenant_exists(name):
                return []
            response = self._collection().with_tenant(name).query.bm25(
                query=query, query_properties=[f"title^{TITLE_BOOST}", "text"], limit=k,
                filters=schema.entity_filter(keys, acl, visibility),
                return_metadata=MetadataQuery(score=True), return_properties=schema.RETURNED,
            )
        return [schema.passage(o, engine=ENTITY_ENGINE, rank=rank, score=float(o.metadata.score or 0.0))
                for rank, o in enumerate(response.objects, start=1)]
