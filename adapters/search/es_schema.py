"""Elasticsearch index layout and request bodies: mappings, documents and the search DSL, as plain data.

One shared index for every tenant (behind an alias, so a reindex is an alias swap); the tenant and the ACL
are `filter` clauses added here, never by the caller. Pure functions: the wire tests assert these bodies.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from adapters.search._common import PUBLIC, timestamp, visible_to
from investigation.entities import entities
from investigation.state import Chunk, Visibility

# v2: `visibility`; v3: `entities`. Bump when the mapping changes: a field added to the mapping is added to
# an older index in place (`mapping_upgrade`); any other change needs `ElasticsearchLexical.reindex`.
SCHEMA_VERSION = 3
TITLE_BOOST = 2  # the "title^2"; the embedded engine tunes its own (see embedded_lexical)
IDENTIFIER_BOOST = 3.0
# The chunk's entity keys (`investigation.entities`), untokenised: the chunk–entity graph the `entities`
# engine expands over. An entity term outweighs a query word, as in the embedded entity index.
ENTITY_FIELD = "entities"
ENTITY_BOOST = 2.0
# Fields each version added, so an index of an older version can be brought up to date in place.
ADDED_FIELDS: dict[int, dict[str, dict[str, Any]]] = {3: {ENTITY_FIELD: {"type": "keyword"}}}
SOURCE_FIELDS = ["chunk_id", "source_id", "title", "text", "url", "visibility"]
_SEP = "\x1f"
# A query word that looks like an identifier: error codes (ERR_4021), invoice numbers (INV-2024-001),
# versions (v2.3.1): letters and digits together, or parts joined by `_`.
_TOKEN = re.compile(r"\S+")
_EDGES = re.compile(r"^[^\w]+|[^\w]+$")
_IDENT_SHAPE = re.compile(r"\w+(?:[-_./]\w+)*")


def physical_index(alias: str, version: int = SCHEMA_VERSION) -> str:
    return f"{alias}-v{version}"


def index_body(*, shards: int, replicas: int) -> dict[str, Any]:
    """Settings + mappings of the chunk index (`PUT /<alias>-v<N>`)."""
    identifier_field = {"type": "text", "analyzer": "sleuth_identifier"}
    return {
        "settings": {
            "number_of_shards": shards,
            "number_of_replicas": replicas,
            "analysis": {
                "filter": {
                    # Strip punctuation around a word but keep it inside: "(ERR_4021)," -> "err_4021".
                    "sleuth_trim_edges": {
                        "type": "pattern_replace",
                        "pattern": r"^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$",
                        "replacement": "",
                    },
                    "sleuth_non_empty": {"type": "length", "min": 1},
                },
                "analyzer": {
                    # Whole identifiers as single terms: the standard tokenizer would split INV-2024-001.
                    "sleuth_identifier": {
                        "type": "custom",
                        "tokenizer": "whitespace",
                        "filter": ["sleuth_trim_edges", "lowercase", "sleuth_non_empty"],
                    },
                },
                "normalizer": {"sleuth_lowercase": {"type": "custom", "filter": ["lowercase"]}},
            },
        },
        "mappings": {
            "dynamic": "strict",
            "_meta": {"schema_version": SCHEMA_VERSION, "owner": "sleuth"},
            "properties": {
                "tenant_id": {"type": "keyword"},
                "chunk_id": {"type": "keyword"},
                "source_id": {"type": "keyword"},
                "title": {
                    "type": "text",
                    "analyzer": "english",
                    "index_options": "offsets",
                    "fields": {
                        "keyword": {"type": "keyword", "ignore_above": 512, "normalizer": "sleuth_lowercase"},
                        "ids": identifier_field,
                    },
                },
                "text": {
                    "type": "text",
                    "analyzer": "english",
                    "index_options": "offsets",
                    "fields": {"ids": identifier_field},
                },
                "url": {"type": "keyword", "index": False},
                "acl": {"type": "keyword"},
                "visibility": {"type": "keyword"},
                "updated_at": {"type": "date", "ignore_malformed": True},
                "position": {"type": "integer"},
                ENTITY_FIELD: ADDED_FIELDS[3][ENTITY_FIELD],
            },
        },
    }


def mapping_version(mapping: dict[str, Any]) -> int:
    """The schema version an index's mapping (one entry of `GET /<alias>/_mapping`) was built with."""
    mappings = mapping.get("mappings") or {}
    return int((mappings.get("_meta") or {}).get("schema_version") or 1)


def mapping_upgrade(version: int) -> dict[str, Any] | None:
    """`PUT /<index>/_mapping` body adding the fields of every version after `version` (a new field is the
    one mapping change Elasticsearch applies to an existing index), or None when it is current. Chunks
    indexed before the upgrade have no entities until they are ingested again."""
    added = {name: field for v, fields in sorted(ADDED_FIELDS.items()) if v > version
             for name, field in fields.items()}
    if not added:
        return None
    return {"properties": added, "meta": {"schema_version": SCHEMA_VERSION, "owner": "sleuth"}}


def doc_id(tenant: str, chunk_id: str) -> str:
    """`_id` of a chunk: stable per (tenant, chunk), so re-ingest overwrites instead of duplicating.
    Hashed because `_id` is capped at 512 bytes and chunk ids are not."""
    return hashlib.sha256(f"{tenant}{_SEP}{chunk_id}".encode()).hexdigest()[:40]


def document(tenant: str, chunk: Chunk) -> dict[str, Any]:
    body: dict[str, Any] = {
        "tenant_id": tenant, "chunk_id": chunk.chunk_id, "source_id": chunk.source_id,
        "title": chunk.title, "text": chunk.text, "acl": list(chunk.acl) or [PUBLIC],
        "position": chunk.position, "visibility": chunk.visibility.value,
        ENTITY_FIELD: entities(chunk.text, chunk.title),
    }
    if chunk.url:
        body["url"] = chunk.url
    if (updated := timestamp(chunk.updated_at)) is not None:
        body["updated_at"] = updated
    return body


def index_actions(index: str, tenant: str, chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    """`_bulk` index actions (whole-document replace), last chunk winning when a batch repeats an id."""
    latest = {c.chunk_id: c for c in chunks}
    return [
        {
            "_op_type": "index",
            "_index": index,
            "_id": doc_id(tenant, c.chunk_id),
            "_source": document(tenant, c),
        }
        for c in latest.values()
    ]


def identifiers(query: str) -> list[str]:
    """Identifier-looking words of a query, punctuation around them removed, in order, without repeats."""
    found: dict[str, None] = {}
    for raw in _TOKEN.findall(query):
        word = _EDGES.sub("", raw)
        if not word or not _IDENT_SHAPE.fullmatch(word):
            continue
        letters = any(ch.isalpha() for ch in word)
        digits = any(ch.isdigit() for ch in word)
        if (letters and digits) or ("_" in word.strip("_") and letters):
            found[word] = None
    return list(found)


def tenant_filter(tenant: str, acl: Sequence[str] | None,
                  visibility: Sequence[Visibility] | None = None) -> list[dict[str, Any]]:
    """The clauses no search may omit: this tenant only, and (when given) what `acl` may see and the
    visibilities allowed (a chunk indexed without one is not shown to a restricted caller)."""
    clauses: list[dict[str, Any]] = [{"term": {"tenant_id": tenant}}]
    if acl is not None:
        clauses.append({"terms": {"acl": visible_to(acl)}})
    if visibility is not None:
        clauses.append({"terms": {"visibility": [Visibility(v).value for v in visibility]}})
    return clauses


def search_body(tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
                visibility: Sequence[Visibility] | None = None) -> dict[str, Any]:
    """`POST /<alias>/_search`: BM25 over title^2 and text, an exact path for identifiers, filters."""
    should: list[dict[str, Any]] = [{
        "multi_match": {"query": query, "fields": [f"title^{TITLE_BOOST}", "text"], "type": "best_fields",
                        "tie_breaker": 0.3},
    }]
    for ident in identifiers(query):
        should += [
            {"match": {"text.ids": {"query": ident, "boost": IDENTIFIER_BOOST}}},
            {"match": {"title.ids": {"query": ident, "boost": IDENTIFIER_BOOST * TITLE_BOOST}}},
            {"match_phrase": {"text": {"query": ident}}},
            {"term": {"source_id": {"value": ident, "case_insensitive": True, "boost": IDENTIFIER_BOOST}}},
        ]
    return {
        "query": {
            "bool": {
                "filter": tenant_filter(tenant, acl, visibility),
                "should": should,
                "minimum_should_match": 1,
            }
        },
        "size": k,
        "_source": SOURCE_FIELDS,
        "track_total_hits": False,
    }


def entity_search_body(tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
                       visibility: Sequence[Visibility] | None = None) -> dict[str, Any] | None:
    """`POST /<alias>/_search` of the `entities` engine: chunks naming one of the entities the query names
    (a `terms` query on the keyword field: one step over the chunk–entity graph), ranked by that match plus
    BM25 of the query over title^2 and text. None when the query names no entity."""
    keys = entities(query)
    if not keys:
        return None
    return {
        "query": {
            "bool": {
                "filter": tenant_filter(tenant, acl, visibility),
                "must": [{"terms": {ENTITY_FIELD: keys, "boost": ENTITY_BOOST}}],
                "should": [{"multi_match": {"query": query, "fields": [f"title^{TITLE_BOOST}", "text"],
                                            "type": "best_fields", "tie_breaker": 0.3}}],
            }
        },
        "size": k,
        "_source": SOURCE_FIELDS,
        "track_total_hits": False,
    }


def delete_query(tenant: str, source_ids: Sequence[str]) -> dict[str, Any]:
    return {"bool": {"filter": [{"term": {"tenant_id": tenant}}, {"terms": {"source_id": list(source_ids)}}]}}


def count_query(tenant: str) -> dict[str, Any]:
    return {"bool": {"filter": [{"term": {"tenant_id": tenant}}]}}
