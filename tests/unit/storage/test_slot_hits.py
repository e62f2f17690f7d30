"""The stored form of a slot's result (`SlotHits.to_json`) reads back as the very same object, whatever its
texts and numbers hold, and the memory of what a process parked (`Written`) stays bounded."""

from __future__ import annotations

import json
import math

import pytest

from investigation.state import Passage
from storage.hits import SlotHits, Written


def _passage(chunk_id: str, *, text: str = "text", title: str = "T", score: float = 0.5) -> Passage:
    return Passage(chunk_id=chunk_id, source_id=chunk_id.split("#")[0], title=title, text=text, score=score,
                   engine="bm25", rank=1)


@pytest.mark.parametrize(
    "hits",
    [
        SlotHits(query="q", engine="bm25"),
        SlotHits(query="q", engine="bm25", passages=(_passage("a#0"),), error=None, cached=True, ms=2.0),
        SlotHits(
            query="Zürich “quoted” 東京",
            engine="vector",
            passages=(
                _passage("a#0", text="naïve café — ∑ 🙂", title="Ünïcode"),
                _passage("b#1", score=1e-17),
            ),
        ),
        SlotHits(query="q", engine="bm25", passages=(_passage("a#0", score=float("nan")),)),
        SlotHits(query="q", engine="bm25", passages=(_passage("a#0", score=float("inf")),), ms=float("-inf")),
        SlotHits(query="finding", engine="tool:billing", error="TransientError: down", passages=()),
    ],
    ids=["empty", "plain", "non-ascii", "nan", "infinity", "tool"],
)
def test_the_stored_form_reads_back_as_the_same_object(hits: SlotHits) -> None:
    raw, exact = hits.stored_form()
    assert exact and raw == hits.to_json()
    back = SlotHits.from_json(raw)
    assert back.model_fields_set == hits.model_fields_set  # only the fields the task set are stored
    assert json.loads(raw).keys() == hits.model_fields_set
    for mine, theirs in zip(back.passages, hits.passages, strict=True):
        assert mine.model_dump(exclude={"score"}) == theirs.model_dump(exclude={"score"})
        assert (mine.score == theirs.score) or (math.isnan(mine.score) and math.isnan(theirs.score))
    if not any(math.isnan(p.score) for p in hits.passages):
        assert back == hits
    assert (back.query, back.engine, back.error, back.cached, back.ms) == (
        hits.query, hits.engine, hits.error, hits.cached, hits.ms)


def test_a_lone_surrogate_is_stored_escaped_and_read_as_unreadable_as_it_always_was() -> None:
    hits = SlotHits(query="q", engine="bm25",
                    passages=(_passage("a#0", text="x " + chr(0xDFFF) + " y"),))
    raw, exact = hits.stored_form()
    assert raw.isascii() and "\\udfff" in raw and not exact
    raw.encode()  # Redis can be given it
    with pytest.raises(ValueError):
        SlotHits.from_json(raw)


def test_the_stored_form_is_the_json_the_previous_release_wrote() -> None:
    """A reducer of the previous release (json.dumps of the dumped dict) reads the same values."""
    hits = SlotHits(query="Zürich", engine="bm25", passages=(_passage("a#0", text="naïve"),), ms=1.25)
    assert json.loads(hits.to_json()) == json.loads(
        json.dumps(hits.model_dump(mode="json", include=set(hits.model_fields_set)))
    )


def test_what_a_process_parked_is_recalled_once_only_for_the_same_bytes_and_is_bounded() -> None:
    written = Written(size=2)
    hits = SlotHits(query="q", engine="bm25")
    raw = hits.to_json().encode()
    written.remember("k", "s", raw, hits)
    assert written.recall("k", "s", raw + b" ") is None  # not those bytes: parse what Redis holds
    written.remember("k", "s", raw, hits)
    assert written.recall("k", "s", raw.decode()) is hits  # a decoding client gives str: the same text
    assert written.recall("k", "s", raw) is None  # once
    for i in range(3):
        written.remember("k", f"s{i}", raw, hits)
    assert written.recall("k", "s0", raw) is None  # the oldest was forgotten
    assert written.recall("k", "s1", raw) is hits and written.recall("k", "s2", raw) is hits
