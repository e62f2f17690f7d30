"""Ingest: loading every format, validation errors that name file/line/field, chunking invariants,
re-ingest."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from adapters.search.embedded_lexical import EmbeddedBM25
from adapters.search.ingest import SourceDocument, chunk_document, ingest, load_documents
from investigation.errors import ValidationFailed


def write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


GOOD: list[dict[str, Any]] = [
    {"id": "reset-password", "title": "Resetting your password", "text": "Click 'Forgot password'."},
    {"id": "sso", "title": "SSO", "text": "Upload the SAML metadata.", "url": "https://help.test/sso",
     "updated_at": "2024-05-01T10:00:00Z", "acl": ["group:admins"], "extra": "ignored"},
]


# -- loading ------------------------------------------------------------------------------------------


def test_loads_jsonl_markdown_text_and_folders(tmp_path: Path) -> None:
    kb = write_jsonl(tmp_path / "kb.jsonl", [GOOD[0], "", GOOD[1]])
    folder = tmp_path / "articles"
    (folder / "nested").mkdir(parents=True)
    (folder / "Billing FAQ.md").write_text("Intro line.\n\n# Billing questions\n\nInvoices are monthly.\n")
    (folder / "nested" / "release-notes.txt").write_text("Version 2.3 adds dark mode.")
    (folder / "nested" / "image.png").write_bytes(b"\x89PNG")
    (folder / ".hidden.md").write_text("# Secret\n\nnot loaded")
    docs = {d.id: d for d in load_documents([kb, folder])}
    assert set(docs) == {"reset-password", "sso", "billing-faq", "release-notes"}
    assert docs["sso"] == SourceDocument(
        id="sso", title="SSO", text="Upload the SAML metadata.", url="https://help.test/sso",
        updated_at="2024-05-01T10:00:00Z", acl=("group:admins",),
    )
    assert docs["billing-faq"].title == "Billing questions"
    assert docs["billing-faq"].text == "Intro line.\n\nInvoices are monthly."
    assert (docs["release-notes"].title, docs["release-notes"].text) == (
        "release-notes",
        "Version 2.3 adds dark mode.",
    )


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ({"id": "a", "title": "A"}, "kb.jsonl:2: text", "Field required"),
        ({"id": "a", "title": "A", "text": "   "}, "kb.jsonl:2: text", "must not be empty"),
        ({"id": 7, "title": "A", "text": "x"}, "kb.jsonl:2: id", "valid string"),
        ({"id": "a", "text": "x"}, "kb.jsonl:2: title", "Field required"),
        ({"id": "a", "title": "A", "text": "x", "acl": "admins"}, "kb.jsonl:2: acl", "tuple"),
        ('{"id": "a", "title": ', "kb.jsonl:2: line", "invalid JSON"),
        ('["a", "b"]', "kb.jsonl:2: line", "JSON object"),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path: Path, line: object, field: str, message: str) -> None:
    kb = write_jsonl(tmp_path / "kb.jsonl", [GOOD[0], line])
    with pytest.raises(ValidationFailed) as caught:
        load_documents([kb])
    assert caught.value.field == field
    assert message in caught.value.message


def test_every_problem_is_counted_and_files_inside_folders_are_named_by_relative_path(tmp_path: Path) -> None:
    (tmp_path / "kb" / "team").mkdir(parents=True)
    write_jsonl(tmp_path / "kb" / "team" / "faq.jsonl", [GOOD[0], {"id": "b"}, {"id": "c", "title": "C"}])
    with pytest.raises(ValidationFailed) as caught:
        load_documents([tmp_path / "kb"])
    assert caught.value.field == "team/faq.jsonl:2: title"
    # every further problem is named too, so one run shows everything to fix
    assert (
        "team/faq.jsonl:2: text" in caught.value.message and "team/faq.jsonl:3: text" in caught.value.message
    )


def test_duplicate_ids_name_both_places(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "kb.jsonl", GOOD)
    second = write_jsonl(tmp_path / "more.jsonl", [{"id": "sso", "title": "Again", "text": "dup"}])
    with pytest.raises(ValidationFailed) as caught:
        load_documents([first, second])
    assert caught.value.field == "more.jsonl:1: id"
    assert "'sso'" in caught.value.message and "kb.jsonl:2" in caught.value.message


def test_missing_and_unsupported_paths_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValidationFailed, match="no such file"):
        load_documents([tmp_path / "nope.jsonl"])
    (tmp_path / "kb.csv").write_text("id,title,text\n")
    with pytest.raises(ValidationFailed, match="unsupported file type") as caught:
        load_documents([tmp_path / "kb.csv"])
    assert caught.value.field == "kb.csv"
    (tmp_path / "empty.md").write_text("# Only a heading\n")
    with pytest.raises(ValidationFailed) as caught:
        load_documents([tmp_path / "empty.md"])
    assert caught.value.field == "empty.md: text"


def test_nothing_is_indexed_when_any_document_is_invalid(tmp_path: Path) -> None:
    backend = EmbeddedBM25(tmp_path / "index")
    kb = write_jsonl(tmp_path / "kb.jsonl", [*GOOD, {"id": "broken", "title": "B"}])
    with pytest.raises(ValidationFailed):
        ingest(load_documents([kb]), tenant="acme", backends=[backend])
    assert backend.count("acme") == 0
    duplicated = [SourceDocument(**GOOD[0]), SourceDocument(**GOOD[1]), SourceDocument(**GOOD[0])]
    with pytest.raises(ValidationFailed) as caught:
        ingest(duplicated, tenant="acme", backends=[backend])
    assert caught.value.field == "documents[2]: id" and "documents[0]" in caught.value.message
    assert backend.count("acme") == 0


# -- chunking ------------------------------------------------------------------------------------------


def random_document(rng: random.Random, doc_id: str) -> SourceDocument:
    vocabulary = [
        "sync",
        "mailbox",
        "error",
        "invoice",
        "password",
        "admin",
        "token",
        "export",
        "retry",
        "proxy",
    ]
    paragraphs = []
    for _ in range(rng.randint(1, 12)):
        sentences = []
        for _ in range(rng.randint(1, 8)):
            length = rng.choice([3, 8, 15, 30, 120, 450])  # includes run-on "sentences" longer than a chunk
            sentences.append(" ".join(rng.choice(vocabulary) for _ in range(length)) + rng.choice(".!?"))
        paragraphs.append(" ".join(sentences))
    return SourceDocument(id=doc_id, title=f"Doc {doc_id}", text="\n\n".join(paragraphs), acl=("g",))


@pytest.mark.parametrize(("max_words", "overlap"), [(200, 30), (50, 10), (20, 0), (7, 3)])
def test_chunks_cover_the_document_in_order_within_the_size_limit(max_words: int, overlap: int) -> None:
    rng = random.Random(max_words)
    for n in range(25):
        doc = random_document(rng, f"doc-{n}")
        words = doc.text.split()
        chunks = chunk_document(doc, max_words=max_words, overlap_words=overlap)
        assert [c.position for c in chunks] == list(range(len(chunks)))
        assert [c.chunk_id for c in chunks] == [f"doc-{n}#{i}" for i in range(len(chunks))]
        assert all((c.source_id, c.title, c.acl) == (doc.id, doc.title, doc.acl) for c in chunks)
        end = 0
        start = 0
        for chunk in chunks:
            piece = chunk.text.split()
            assert 0 < len(piece) <= max_words
            # Each chunk is a contiguous run of the document's words, starting at or before where the
            # previous one ended (no gap) and overlapping it by at most `overlap` words.
            start = next(s for s in range(start, end + 1) if words[s : s + len(piece)] == piece)
            assert end - start <= overlap
            end = start + len(piece)
        assert end == len(words)


def test_short_documents_are_one_chunk_with_the_text_unchanged() -> None:
    doc = SourceDocument(id="faq", title="FAQ", text="Line one.\n\nLine two.", url="https://x.test/faq")
    (chunk,) = chunk_document(doc)
    assert (chunk.chunk_id, chunk.text, chunk.url, chunk.position) == ("faq#0", doc.text, doc.url, 0)


def test_chunks_prefer_paragraph_and_sentence_boundaries() -> None:
    paragraphs = [" ".join(f"Sentence {p}.{s} has exactly seven words." for s in range(4)) for p in range(6)]
    doc = SourceDocument(id="d", title="D", text="\n\n".join(paragraphs))  # 6 paragraphs of 24 words
    chunks = chunk_document(doc, max_words=50, overlap_words=8)
    assert all(c.text.startswith("Sentence") and c.text.endswith("words.") for c in chunks)
    assert chunks[0].text == paragraphs[0] + "\n\n" + paragraphs[1]
    assert chunks[1].text.startswith("Sentence 1.3 has")  # one whole sentence (6 words) carried over


def test_invalid_chunk_sizes_are_rejected() -> None:
    doc = SourceDocument(id="d", title="D", text="x")
    with pytest.raises(ValidationFailed):
        chunk_document(doc, max_words=10, overlap_words=10)


# -- ingest --------------------------------------------------------------------------------------------


def test_reingest_is_idempotent_and_replaces_changed_documents(tmp_path: Path) -> None:
    backend = EmbeddedBM25(tmp_path / "index")
    long_doc = SourceDocument(id="long", title="Long", text=" ".join(["Retention keeps tickets."] * 200))
    docs = [SourceDocument(**GOOD[0]), SourceDocument(**GOOD[1]), long_doc]
    calls: list[tuple[int, int]] = []
    first = ingest(
        docs, tenant="acme", backends=[backend], max_words=100, progress=lambda d, t: calls.append((d, t))
    )
    expected = 2 + len(chunk_document(long_doc, 100, 25))
    assert (first.documents, first.chunks, first.removed) == (3, expected, 0)
    assert calls[-1] == (expected, expected)
    again = ingest(docs, tenant="acme", backends=[backend], max_words=100)
    assert again.chunks == expected and again.removed == expected
    assert backend.count("acme") == expected
    shorter = long_doc.model_copy(update={"text": "Retention keeps tickets for 30 days."})
    ingest([shorter], tenant="acme", backends=[backend], max_words=100)
    assert backend.count("acme") == 3
    assert [p.text for p in backend.search("acme", "retention tickets", 10)] == [shorter.text]


def test_ingest_requires_a_tenant(tmp_path: Path) -> None:
    with pytest.raises(ValidationFailed) as caught:
        ingest([SourceDocument(**GOOD[0])], tenant=" ", backends=[EmbeddedBM25(tmp_path)])
    assert caught.value.field == "tenant"


def test_visibility_from_a_jsonl_field_and_from_markdown_or_text_front_matter(tmp_path: Path) -> None:
    (tmp_path / "kb.jsonl").write_text(
        json.dumps({"id": "rb", "title": "Runbook", "text": "Staff only.", "visibility": "internal"}) + "\n"
        + json.dumps({"id": "faq", "title": "FAQ", "text": "Anyone."}) + "\n", encoding="utf-8")
    (tmp_path / "escalation.md").write_text("---\nvisibility: internal\nacl: [staff, tier2]\n---\n"
                                            "# Escalations\n\nPage the on-call.\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("---\nvisibility: public\n---\nRelease notes\nAll good.\n",
                                        encoding="utf-8")
    docs = {d.id: d for d in load_documents([tmp_path])}
    assert {k: d.visibility.value for k, d in docs.items()} == {
        "rb": "internal", "faq": "public", "escalation": "internal", "notes": "public"}
    assert docs["escalation"].title == "Escalations" and docs["escalation"].acl == ("staff", "tier2")
    assert "---" not in docs["escalation"].text and "visibility" not in docs["notes"].text
    assert {c.visibility.value for c in chunk_document(docs["rb"])} == {"internal"}


def test_an_unknown_visibility_is_rejected_with_its_place(tmp_path: Path) -> None:
    (tmp_path / "kb.jsonl").write_text(
        json.dumps({"id": "x", "title": "X", "text": "t", "visibility": "secret"}), encoding="utf-8"
    )
    with pytest.raises(ValidationFailed) as caught:
        load_documents([tmp_path / "kb.jsonl"])
    assert "kb.jsonl:1: visibility" in str(caught.value)
