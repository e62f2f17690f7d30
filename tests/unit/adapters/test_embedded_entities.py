"""The embedded entity index (tantivy, on disk): a search follows the entities its query names to the
chunks that name them, ranked for the query, inside the tenant, ACL and visibility filters."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.search.embedded_entities import EmbeddedEntityIndex
from investigation.errors import ValidationFailed
from investigation.state import Chunk, Visibility


def _chunk(cid: str, title: str, text: str, *, visibility: Visibility = Visibility.PUBLIC,
           acl: tuple[str, ...] = ()) -> Chunk:
    return Chunk(chunk_id=cid, source_id=cid, title=title, text=text, url=None, updated_at=None, acl=acl,
                 position=0, visibility=visibility)


@pytest.fixture
def index(tmp_path: Path) -> EmbeddedEntityIndex:
    ix = EmbeddedEntityIndex(tmp_path)
    ix.upsert("t1", [
        _chunk("annals", "Annals of Quiet Harbours",
               "Annals of Quiet Harbours is published by the Brackwater Maritime Society."),
        _chunk("society", "Brackwater Maritime Society",
               "The Brackwater Maritime Society was founded in 1884; its first president was Ilse Varnow."),
        _chunk("ships", "Ships", "A ship is a large watercraft."),
        _chunk("memo", "Society memo", "Brackwater Maritime Society dues rise next year.",
               visibility=Visibility.INTERNAL, acl=("staff",)),
    ])
    return ix


def test_a_bridge_query_finds_the_chunks_that_name_its_entity_best_first(index: EmbeddedEntityIndex) -> None:
    found = index.search("t1", "Brackwater Maritime Society first president", 5)
    assert found[0].chunk_id == "society"  # names the entity and answers the rest of the query
    assert {p.chunk_id for p in found} == {"society", "annals", "memo"}
    assert "ships" not in {p.chunk_id for p in found}  # names none of the query's entities
    assert all(p.engine == "entities" for p in found)


def test_a_query_naming_no_entity_finds_nothing(index: EmbeddedEntityIndex) -> None:
    assert index.search("t1", "who was the first president of the society", 5) == []


def test_tenant_acl_and_visibility_filters_hold(index: EmbeddedEntityIndex) -> None:
    query = "Brackwater Maritime Society"
    assert index.search("t2", query, 5) == []
    public = index.search("t1", query, 5, visibility=(Visibility.PUBLIC,))
    assert "memo" not in {p.chunk_id for p in public} and public
    assert "memo" not in {p.chunk_id for p in index.search("t1", query, 5, acl=("guests",))}
    assert "memo" in {p.chunk_id for p in index.search("t1", query, 5, acl=("staff",))}


def test_delete_and_count_and_empty_query(index: EmbeddedEntityIndex) -> None:
    assert index.count("t1") == 4
    assert index.delete("t1", ["memo"]) == 1 and index.count("t1") == 3
    with pytest.raises(ValidationFailed):
        index.search("t1", "   ", 5)
