"""Elasticsearch behind the `SearchBackend` port: the lexical engine of the production setup.

One shared, versioned index (`<alias>-v<N>`) behind an alias holds every tenant; `tenant_id` and `acl` are
filter clauses built in `es_schema`, never by callers. Writes go through the official `_bulk` helper in
chunks, and every item the server refuses is reported (see `_common.raise_for_failures`). The client is
built lazily and per process: Celery forks workers after import.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapters.search import es_schema
from adapters.search._common import ItemFailure, check_query, check_tenant, raise_for_failures
from adapters.search._translate import RETRY_STATUSES, bulk_item_reason, error_type, translate_elasticsearch
from investigation.errors import PermanentError, SleuthError, TransientError
from investigation.state import Chunk, Passage, Visibility

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

    from config.settings import Settings

log = logging.getLogger("sleuth.search.elasticsearch")
DELETE_TERMS = 1000  # source ids per delete-by-query (the terms query allows 65,536)


@dataclass(frozen=True)
class ElasticsearchConfig:
    """How to reach the cluster and lay out the index (built from `Settings`, validated eagerly)."""

    url: str
    index: str = "sleuth-chunks"  # the alias; the physical index is `<index>-v<SCHEMA_VERSION>`
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    ca_certs: Path | None = None
    verify_certs: bool = True
    request_timeout: float = 10.0
    max_retries: int = 3
    bulk_chunk: int = 500
    bulk_retries: int = 3  # per-item 429 rejections, retried with backoff by the bulk helper
    bulk_backoff: float = 2.0
    shards: int = 1
    replicas: int = 1

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise PermanentError(f"ELASTICSEARCH_URL must be an http(s) URL, got {self.url!r}")
        if self.api_key and self.username:
            raise PermanentError("set either an Elasticsearch API key or a username/password, not both")
        if self.bulk_chunk < 1 or self.max_retries < 0 or self.request_timeout <= 0:
            raise PermanentError("Elasticsearch bulk_chunk >= 1, max_retries >= 0, request_timeout > 0")
        if self.index != self.index.lower() or not self.index or self.index[0] in "-_+":
            raise PermanentError(f"Elasticsearch index names are lowercase, got {self.index!r}")

    @classmethod
    def from_settings(cls, settings: Settings) -> ElasticsearchConfig:
        if not settings.engines.elasticsearch_url:
            raise PermanentError("lexical_backend is elasticsearch but ELASTICSEARCH_URL is not set")
        secret = settings.engines.elasticsearch_api_key
        password = settings.engines.elasticsearch_password
        return cls(
            url=settings.engines.elasticsearch_url,
            index=settings.engines.elasticsearch_index,
            api_key=secret.get_secret_value() if secret else None,
            username=settings.engines.elasticsearch_username,
            password=password.get_secret_value() if password else None,
            ca_certs=settings.engines.elasticsearch_ca_certs,
            verify_certs=settings.engines.elasticsearch_verify_certs,
            request_timeout=settings.engines.elasticsearch_timeout,
            max_retries=settings.engines.elasticsearch_max_retries,
            bulk_chunk=settings.engines.elasticsearch_bulk_chunk,
            shards=settings.engines.elasticsearch_shards,
            replicas=settings.engines.elasticsearch_replicas,
        )


class ElasticsearchLexical:
    """BM25 over title^2 and text in one shared index; tenant and ACL are filters inside every query."""

    name = "elasticsearch"

    def __init__(self, config: ElasticsearchConfig) -> None:
        self.config = config
        self.alias = config.index
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._client: Elasticsearch | None = None
        self._ready = False  # the alias is known to exist (checked once per process)

    @classmethod
    def from_settings(cls, settings: Settings) -> ElasticsearchLexical:
        return cls(ElasticsearchConfig.from_settings(settings))

    # -- port ---------------------------------------------------------------------------------------

    def upsert(self, tenant: str, chunks: Sequence[Chunk]) -> int:
        check_tenant(tenant)
        if not chunks:
            return 0
        from elasticsearch.helpers import streaming_bulk

        actions = es_schema.index_actions(self.alias, tenant, chunks)
        chunk_of = {a["_id"]: a["_source"]["chunk_id"] for a in actions}
        stored, failures = 0, []
        with self._errors("bulk index"):
            client = self._ready_client()
            # refresh=wait_for: a search right after an ingest sees it, without forcing a refresh.
            for ok, item in streaming_bulk(
                client, actions, chunk_size=self.config.bulk_chunk, raise_on_error=False,
                raise_on_exception=True, max_retries=self.config.bulk_retries,
                initial_backoff=self.config.bulk_backoff, yield_ok=True, refresh="wait_for",
            ):
                result = next(iter(item.values()))
                if ok:
                    stored += 1
                    continue
                status = int(result.get("status", 0))
                failures.append(ItemFailure(
                    chunk_id=chunk_of.get(str(result.get("_id")), str(result.get("_id"))),
                    reason=bulk_item_reason(result.get("error"), status),
                    retryable=status in RETRY_STATUSES or status >= 500,
                ))
        raise_for_failures(self.name, failures, len(actions))
        return stored

    def delete(self, tenant: str, source_ids: Sequence[str]) -> int:
        check_tenant(tenant)
        ids = sorted(set(source_ids))
        if not ids:
            return 0
        deleted = 0
        with self._errors("delete by query"):
            client = self._ready_client()
            for start in range(0, len(ids), DELETE_TERMS):
                response = client.delete_by_query(
                    index=self.alias, query=es_schema.delete_query(tenant, ids[start:start + DELETE_TERMS]),
                    refresh=True,
                )
                if response.get("failures"):
                    raise TransientError(
                        f"elasticsearch delete-by-query failures: {response['failures'][:3]}"
                    )
                deleted += int(response.get("deleted", 0))
        return deleted

    def delete_tenant(self, tenant: str) -> int:
        """Every chunk of `tenant` (tenant removal): one delete-by-query on its tenant filter."""
        check_tenant(tenant)
        with self._errors("delete tenant"):
            response = self._ready_client().delete_by_query(
                index=self.alias, query=es_schema.count_query(tenant), refresh=True, conflicts="proceed"
            )
            if response.get("failures"):
                raise TransientError(f"elasticsearch delete-by-query failures: {response['failures'][:3]}")
            return int(response.get("deleted", 0))

    def search(self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
               visibility: Sequence[Visibility] | None = None) -> list[Passage]:
        check_tenant(tenant)
        check_query(query)
        if k <= 0:
            return []
        return self._hits(self._body(tenant, query, k, acl=acl, visibility=visibility))

    def _body(self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None,
              visibility: Sequence[Visibility] | None) -> dict[str, Any] | None:
        return es_schema.search_body(tenant, query, k, acl=acl, visibility=visibility)

    def _hits(self, body: dict[str, Any] | None) -> list[Passage]:
        if body is None:
            return []
        with self._errors("search"):
            response = self._ready_client().search(index=self.alias, **body)
        passages = []
        for rank, raw in enumerate(response["hits"]["hits"], start=1):
            source = raw["_source"]
            passages.append(Passage(
                chunk_id=source["chunk_id"], source_id=source["source_id"], title=source.get("title") or "",
                text=source.get("text") or "", url=source.get("url"), score=float(raw.get("_score") or 0.0),
                engine=self.name, rank=rank, visibility=Visibility(source.get("visibility") or "public"),
            ))
        return passages

    def count(self, tenant: str) -> int:
        check_tenant(tenant)
        with self._errors("count"):
            response = self._ready_client().count(index=self.alias, query=es_schema.count_query(tenant))
        return int(response["count"])

    def ping(self) -> bool:
        try:
            return bool(self._get_client().ping())
        except Exception:
            log.warning("elasticsearch ping failed", exc_info=True)
            return False

    # -- index management -------------------------------------------------------------------------------

    def ensure_index(self) -> str:
        """Create `<alias>-v<N>` with its mappings and the alias when no alias exists, or add the fields of
        later schema versions to the indices behind an existing alias; returns the alias."""
        from elasticsearch import BadRequestError

        client = self._get_client()
        with self._errors("create index"):
            if client.indices.exists_alias(name=self.alias):
                for index, mapping in sorted(client.indices.get_mapping(index=self.alias).body.items()):
                    upgrade = es_schema.mapping_upgrade(es_schema.mapping_version(mapping))
                    if upgrade is not None:
                        log.info("elasticsearch index %s: adding the fields of schema v%d", index,
                                 es_schema.SCHEMA_VERSION)
                        client.indices.put_mapping(index=index, **upgrade)
            else:
                body = es_schema.index_body(shards=self.config.shards, replicas=self.config.replicas)
                try:
                    client.indices.create(index=es_schema.physical_index(self.alias), **body,
                                          aliases={self.alias: {"is_write_index": True}})
                except BadRequestError as exc:  # another process created it first
                    if error_type(exc) != "resource_already_exists_exception":
                        raise
        self._ready = True
        return self.alias

    def reindex(self, target: str) -> str:
        """Copy everything into a new index `target` built from the current mappings, then move the alias
        to it in one atomic `_aliases` call (readers never see a half-built index). Stop writers first:
        writes during the copy land in the old index only."""
        client = self._get_client()
        with self._errors("reindex"):
            current = sorted(client.indices.get_alias(name=self.alias))
            if target in current:
                return target
            client.indices.create(index=target, **es_schema.index_body(shards=self.config.shards,
                                                                       replicas=self.config.replicas))
            client.reindex(source={"index": self.alias}, dest={"index": target}, wait_for_completion=True,
                           refresh=True)
            actions: list[dict[str, Any]] = [{"remove": {"index": i, "alias": self.alias}} for i in current]
            actions.append({"add": {"index": target, "alias": self.alias, "is_write_index": True}})
            client.indices.update_aliases(actions=actions)
        return target

    def drop(self) -> None:
        """Delete every index behind the alias, with all tenants' chunks (test teardown, decommissioning)."""
        from elasticsearch import NotFoundError

        client = self._get_client()
        with self._errors("drop"):
            try:
                indices = sorted(client.indices.get_alias(name=self.alias))
            except NotFoundError:
                indices = []
            if indices:
                client.indices.delete(index=",".join(indices))
        self._ready = False

    def close(self) -> None:
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                self._client.close()
            self._client, self._pid, self._ready = None, None, False

    # -- internals ----------------------------------------------------------------------------------

    def _get_client(self) -> Elasticsearch:
        pid = os.getpid()
        with self._lock:
            if self._client is None or self._pid != pid:
                self._client, self._pid, self._ready = self._build_client(), pid, False
            return self._client

    def _ready_client(self) -> Elasticsearch:
        client = self._get_client()
        if not self._ready:
            self.ensure_index()
        return client

    def _build_client(self) -> Elasticsearch:
        from elasticsearch import Elasticsearch

        cfg = self.config
        options: dict[str, Any] = {
            "request_timeout": cfg.request_timeout, "max_retries": cfg.max_retries,
            "retry_on_status": RETRY_STATUSES, "retry_on_timeout": True, "verify_certs": cfg.verify_certs,
        }
        if cfg.api_key:
            options["api_key"] = cfg.api_key
        elif cfg.username:
            options["basic_auth"] = (cfg.username, cfg.password or "")
        if cfg.ca_certs:
            options["ca_certs"] = str(cfg.ca_certs)
        return Elasticsearch(cfg.url, **options)

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except SleuthError:
            raise
        except Exception as exc:
            raise translate_elasticsearch(exc, action) from exc


class ElasticsearchEntities(ElasticsearchLexical):
    """The `entities` engine on the same index: chunks naming an entity the query names (the chunk–entity
    graph's one step, a `terms` query on the keyword field), ranked by BM25 of the query."""

    name = "entities"

    @classmethod
    def from_settings(cls, settings: Settings) -> ElasticsearchEntities:
        return cls(ElasticsearchConfig.from_settings(settings))

    def _body(self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None,
              visibility: Sequence[Visibility] | None) -> dict[str, Any] | None:
        return es_schema.entity_search_body(tenant, query, k, acl=acl, visibility=visibility)
