"""Weaviate collection layout and the values the adapter sends: properties, object ids, tenant names,
filters, and the reading of result objects back into passages. Pure: the wire tests assert these."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from adapters.search._common import PUBLIC, timestamp, visible_to
from investigation.entities import entities
from investigation.state import Chunk, Passage, Visibility

VECTOR = "default"  # the one named vector: bring-your-own MiniLM vectors, cosine distance
PROPERTIES = ["chunk_id", "source_id", "title", "text", "acl", "visibility", "updated_at", "url", "position",
              "entities"]
# The chunk's entity keys (`investigation.entities`), a text[] of whole values: the chunk–entity graph the
# `entities` engine filters on. Added to a collection created before it on first use (`entity_property`).
ENTITY_PROPERTY = "entities"
RETURNED = ["chunk_id", "source_id", "title", "text", "url", "visibility"]
# Namespace of object ids: uuid5(namespace, tenant + US + chunk_id) is stable across processes and runs.
NAMESPACE = uuid.UUID("5f1e7c2a-3b4d-5e6f-8a9b-0c1d2e3f4a5b")
_TENANT_OK = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TENANT_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_COLLECTION_OK = re.compile(r"[A-Z][_0-9A-Za-z]{0,254}")
_SEP = "\x1f"


def check_collection_name(name: str) -> str:
    if not _COLLECTION_OK.fullmatch(name):
        raise ValueError(
            f"Weaviate collection names start with a capital letter, then [_0-9A-Za-z]: {name!r}"
        )
    return name


def tenant_name(tenant: str) -> str:
    """The Weaviate tenant of a Sleuth tenant: the same name when Weaviate accepts it (1-64 of
    [A-Za-z0-9_-]), else a readable prefix plus a hash, so distinct tenants never share a Weaviate tenant."""
    if _TENANT_OK.fullmatch(tenant):
        return tenant
    digest = hashlib.sha256(tenant.encode()).hexdigest()[:16]
    readable = _TENANT_UNSAFE.sub("_", tenant).strip("_")[:40]
    return f"{readable}-{digest}" if readable else f"t-{digest}"


def object_id(tenant: str, chunk_id: str) -> uuid.UUID:
    """Deterministic id: re-ingesting a chunk overwrites its object (batch import replaces by id)."""
    return uuid.uuid5(NAMESPACE, f"{tenant}{_SEP}{chunk_id}")


def properties(chunk: Chunk) -> dict[str, Any]:
    props: dict[str, Any] = {
        "chunk_id": chunk.chunk_id, "source_id": chunk.source_id, "title": chunk.title, "text": chunk.text,
        "acl": list(chunk.acl) or [PUBLIC], "position": chunk.position, "visibility": chunk.visibility.value,
        ENTITY_PROPERTY: entities(chunk.text, chunk.title),
    }
    if chunk.url:
        props["url"] = chunk.url
    if (updated := timestamp(chunk.updated_at)) is not None:
        props["updated_at"] = datetime.fromisoformat(updated)
    return props


def _keyword(prop: str, array: bool = False) -> Any:
    """An exact-match property (`field` tokenization): filterable, never part of BM25."""
    from weaviate.classes.config import DataType, Property, Tokenization

    return Property(name=prop, data_type=DataType.TEXT_ARRAY if array else DataType.TEXT,
                    tokenization=Tokenization.FIELD, index_filterable=True, index_searchable=False,
                    skip_vectorization=True)


def entity_property() -> Any:
    """The `entities` property (`collection.config.add_property` takes it for an older collection)."""
    return _keyword(ENTITY_PROPERTY, array=True)


def collection_spec(name: str) -> dict[str, Any]:
    """Keyword arguments of `client.collections.create` (built lazily: the client is imported on use)."""
    from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances

    return {
        "name": check_collection_name(name),
        "description": "Sleuth knowledge-base chunks; one Weaviate tenant per Sleuth tenant.",
        "multi_tenancy_config": Configure.multi_tenancy(
            enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
        ),
        "vector_config": Configure.Vectors.self_provided(
            name=VECTOR,
            vector_index_config=Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE),
        ),
        "properties": [
            _keyword("chunk_id"),
            _keyword("source_id"),
            Property(name="title", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
            Property(name="text", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
            _keyword("acl", array=True),
            _keyword("visibility"),
            Property(name="updated_at", data_type=DataType.DATE),
            Property(
                name="url",
                data_type=DataType.TEXT,
                index_filterable=False,
                index_searchable=False,
                skip_vectorization=True,
            ),
            Property(name="position", data_type=DataType.INT, index_filterable=False),
            entity_property(),
        ],
    }


def acl_filter(acl: Sequence[str] | None, visibility: Sequence[Visibility] | None = None) -> Any:
    """`acl` contains any of what the caller may see (None = no ACL restriction), and the chunk's
    visibility is one of `visibility` (None = any; an object stored without one is not shown then)."""
    from weaviate.classes.query import Filter

    filters = []
    if acl is not None:
        filters.append(Filter.by_property("acl").contains_any(visible_to(acl)))
    if visibility is not None:
        filters.append(
            Filter.by_property("visibility").contains_any([Visibility(v).value for v in visibility])
        )
    if not filters:
        return None
    return filters[0] if len(filters) == 1 else Filter.all_of(filters)


def entity_filter(keys: Sequence[str], acl: Sequence[str] | None,
                  visibility: Sequence[Visibility] | None = None) -> Any:
    """The `entities` engine's filter: the chunk names one of `keys` (`ContainsAny` on the text[] property),
    within what the caller may see."""
    from weaviate.classes.query import Filter

    named = Filter.by_property(ENTITY_PROPERTY).contains_any(list(keys))
    allowed = acl_filter(acl, visibility)
    return named if allowed is None else Filter.all_of([named, allowed])


def source_filter(source_ids: Sequence[str]) -> Any:
    from weaviate.classes.query import Filter

    return Filter.by_property("source_id").contains_any(list(source_ids))


def passage(obj: Any, *, engine: str, rank: int, score: float) -> Passage:
    """A result object (`weaviate.collections.classes.internal.Object`) as a passage."""
    props = obj.properties
    return Passage(
        chunk_id=str(props["chunk_id"]),
        source_id=str(props["source_id"]),
        title=str(props.get("title") or ""),
        text=str(props.get("text") or ""),
        url=props.get("url") or None,
        score=score,
        engine=engine,
        rank=rank,
        visibility=Visibility(props.get("visibility") or "public"),
    )
