"""The entity index kept beside the embedded BM25 index: each chunk's entities (`investigation.entities`)
as untokenised terms, searched by the `entities` engine a follow-up hop adds to its chord.

A search reads the entities its query names (a follow-up hop's query names the bridge entity the graded
evidence led to, with the question's own terms), takes the chunks that name one of them — one step over
the chunk–entity graph — and ranks them by the rarity of the entities they share (idf of the term) plus
BM25 of the query over their text: the passage about the bridge, ranked for what the question asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tantivy

from adapters.search._common import check_query, check_tenant
from adapters.search.embedded_lexical import EmbeddedBM25, _schema, query_words
from investigation.entities import entities
from investigation.state import Chunk, Passage, Visibility

ENTITY_FIELD = "entity"
# An entity term outweighs a query word: the engine exists to find the chunks that name the bridge.
ENTITY_BOOST = 2.0


class EmbeddedEntityIndex(EmbeddedBM25):
    """Entity → chunk index (tantivy, one index for every tenant), tenant- and ACL-filtered in `search`."""

    name = "entities"

    def __init__(self, index_dir: Path) -> None:
        super().__init__(index_dir)
        self.path = Path(index_dir) / "entities-v1"
        self._schema = _schema(keyword_fields=(ENTITY_FIELD,))

    def search(
        self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
        visibility: Sequence[Visibility] | None = None,
    ) -> list[Passage]:
        check_tenant(tenant)
        check_query(query)
        keys = entities(query)
        if not keys or k <= 0:
            return []
        named = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, ENTITY_FIELD, key))
                for key in keys
            ]
        )
        clauses: list[tuple[Any, Any]] = [
            (tantivy.Occur.Must, tantivy.Query.boost_query(named, ENTITY_BOOST)),
            *self._filters(tenant, acl, visibility),
        ]
        words = query_words(query)
        if words:
            with self._lock:
                text_query, _ = self._open().parse_query_lenient(words, ["title", "text"])
            clauses.append((tantivy.Occur.Should, text_query))
        return self._passages(tantivy.Query.boolean_query(clauses), k)

    def _document(self, tenant: str, chunk: Chunk) -> Any:
        doc = super()._document(tenant, chunk)
        for key in entities(chunk.text, chunk.title):
            doc.add_text(ENTITY_FIELD, key)
        return doc
