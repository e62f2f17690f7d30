"""Embedded BM25 search (tantivy) behind the `SearchBackend` port: the lexical engine of the no-server setup.

One index under `index_dir/bm25` holds every tenant; the tenant (and ACL) filter is a MUST clause built here,
never by the caller. One process writes at a time (tantivy's writer lock); any number of processes read and
pick up new commits by watching `meta.json`.

Thread safety: tantivy's Python `Index` is a pyo3 object whose methods borrow it (some mutably); two threads
calling into it at once raise `RuntimeError: Already (mutably) borrowed`. Every call on the `Index` therefore
happens under `self._lock` (the inline executor's threads, the API threadpool); a `Searcher` is a separate,
immutable snapshot and is used outside the lock.
"""

from __future__ import annotations

import os
import re
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tantivy

from adapters.search._common import PUBLIC, check_query, check_tenant
from investigation.errors import PermanentError, TransientError
from investigation.state import Chunk, Passage, Visibility

# Tuned on the dev QA sets (hotpotqa, musique): a title boost of 2 cost ~2 points of recall@10 against
# 0.5, because short titles that share one query word then outrank the passage that answers.
TITLE_BOOST = 0.5
ANALYZER = "en_stem_stop"  # tantivy's en_stem plus English stop words (they only add noise to BM25)
WRITER_HEAP = 64_000_000
LOCK_WAIT_SECONDS = 30.0
_SEP = "\x1f"  # joins tenant and id into one raw key; cannot occur in ids typed by people
# Word characters only: every query-syntax character (quotes, colons, brackets, +, -, ^, ~, *, \) goes.
_WORD = re.compile(r"\w+")


def _schema(*, keyword_fields: tuple[str, ...] = ()) -> Any:
    """The index's fields; `keyword_fields` adds untokenised multi-valued fields (the entity index's)."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("tenant", tokenizer_name="raw")
    sb.add_text_field("uid", tokenizer_name="raw")  # tenant + chunk_id: upsert deletes by this term
    sb.add_text_field("tsid", tokenizer_name="raw")  # tenant + source_id: delete(tenant, source_ids)
    sb.add_text_field("chunk_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("source_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("title", stored=True, tokenizer_name=ANALYZER)
    sb.add_text_field("text", stored=True, tokenizer_name=ANALYZER)
    sb.add_text_field("url", stored=True, tokenizer_name="raw")
    sb.add_text_field("acl", tokenizer_name="raw")
    sb.add_text_field("visibility", stored=True, tokenizer_name="raw")
    sb.add_integer_field("position", stored=True)
    for name in keyword_fields:
        sb.add_text_field(name, tokenizer_name="raw")
    return sb.build()


def _analyzer() -> Any:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def query_words(query: str) -> str:
    """User text → a string the tantivy parser accepts whatever the input.

    Only word characters survive, lowercased so AND/OR/NOT/IN are never read as operators. A word the
    analyzer splits (ERR_4021 → err, 4021) becomes a phrase query, which is what an error code wants.
    """
    return " ".join(w.lower() for w in _WORD.findall(query))


class EmbeddedBM25:
    """BM25 over title (boosted) and text, tenant- and ACL-filtered inside `search`."""

    name = "bm25"

    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / "bm25-v2"  # v2: chunks carry a visibility (older indexes: re-ingest)
        self._schema = _schema()
        self._lock = threading.RLock()  # guards every call on the tantivy Index object (see docstring)
        # Opened lazily and per process (Celery forks workers after import).
        self._pid: int | None = None
        self._index: Any = None
        self._meta_stamp: tuple[int, int, int] | None = None
        _LIVE.add(self)

    # -- port ---------------------------------------------------------------------------------------

    def upsert(self, tenant: str, chunks: Sequence[Chunk]) -> int:
        check_tenant(tenant)
        if not chunks:
            return 0
        latest: dict[str, Chunk] = {c.chunk_id: c for c in chunks}  # last one wins within a batch
        with self._writer() as writer:
            for chunk in latest.values():
                writer.delete_documents_by_term("uid", tenant + _SEP + chunk.chunk_id)
                writer.add_document(self._document(tenant, chunk))
        return len(latest)

    def delete(self, tenant: str, source_ids: Sequence[str]) -> int:
        check_tenant(tenant)
        ids = sorted(set(source_ids))
        if not ids:
            return 0
        keys = [tenant + _SEP + s for s in ids]
        doomed = self._searcher().search(tantivy.Query.term_set_query(self._schema, "tsid", keys), 1)
        if doomed.count == 0:
            return 0
        with self._writer() as writer:
            for key in keys:
                writer.delete_documents_by_term("tsid", key)
        return int(doomed.count)

    def delete_tenant(self, tenant: str) -> int:
        """Every chunk of `tenant` (tenant removal)."""
        check_tenant(tenant)
        count = self.count(tenant)
        if count:
            with self._writer() as writer:
                writer.delete_documents_by_term("tenant", tenant)
        return count

    def search(
        self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
        visibility: Sequence[Visibility] | None = None,
    ) -> list[Passage]:
        check_tenant(tenant)
        check_query(query)
        words = query_words(query)
        if not words or k <= 0:
            return []
        with self._lock:
            index = self._open()
            try:
                text_query = index.parse_query(
                    words, ["title", "text"], field_boosts={"title": TITLE_BOOST}
                )
            except ValueError:  # belt and braces: should be unreachable with word-only input
                text_query, _ = index.parse_query_lenient(words, ["title", "text"])
        clauses: list[tuple[Any, Any]] = [
            (tantivy.Occur.Must, text_query),
            *self._filters(tenant, acl, visibility),
        ]
        return self._passages(tantivy.Query.boolean_query(clauses), k)

    def _filters(self, tenant: str, acl: Sequence[str] | None,
                 visibility: Sequence[Visibility] | None) -> list[tuple[Any, Any]]:
        """The MUST clauses every search carries: its tenant, and the caller's ACL and visibility."""
        clauses: list[tuple[Any, Any]] = [
            (tantivy.Occur.Must, tantivy.Query.term_query(self._schema, "tenant", tenant)),
        ]
        if acl is not None:
            allowed = [PUBLIC, *acl]
            clauses.append((tantivy.Occur.Must, tantivy.Query.term_set_query(self._schema, "acl", allowed)))
        if visibility is not None:
            shown = [Visibility(v).value for v in visibility]
            clauses.append(
                (tantivy.Occur.Must, tantivy.Query.term_set_query(self._schema, "visibility", shown))
            )
        return clauses

    def _passages(self, query: Any, k: int) -> list[Passage]:
        searcher = self._searcher()
        hits = searcher.search(query, k, count=False).hits
        passages = []
        for rank, (score, address) in enumerate(hits, start=1):
            doc = searcher.doc(address)
            passages.append(
                Passage(
                    chunk_id=doc.get_first("chunk_id"),
                    source_id=doc.get_first("source_id"),
                    title=doc.get_first("title") or "",
                    text=doc.get_first("text") or "",
                    url=doc.get_first("url"),
                    score=float(score),
                    engine=self.name,
                    rank=rank,
                    visibility=Visibility(doc.get_first("visibility") or "public"),
                )
            )
        return passages

    def count(self, tenant: str) -> int:
        check_tenant(tenant)
        query = tantivy.Query.term_query(self._schema, "tenant", tenant)
        return int(self._searcher().search(query, 1).count)

    def ping(self) -> bool:
        try:
            self._searcher()
        except (OSError, ValueError, PermanentError):  # tantivy reports I/O and format problems as ValueError
            return False
        return True

    # -- internals ----------------------------------------------------------------------------------

    def _document(self, tenant: str, chunk: Chunk) -> Any:
        doc = tantivy.Document()
        doc.add_text("tenant", tenant)
        doc.add_text("uid", tenant + _SEP + chunk.chunk_id)
        doc.add_text("tsid", tenant + _SEP + chunk.source_id)
        doc.add_text("chunk_id", chunk.chunk_id)
        doc.add_text("source_id", chunk.source_id)
        doc.add_text("title", chunk.title)
        doc.add_text("text", chunk.text)
        if chunk.url:
            doc.add_text("url", chunk.url)
        for principal in chunk.acl or (PUBLIC,):
            doc.add_text("acl", principal)
        doc.add_integer("position", chunk.position)
        doc.add_text("visibility", chunk.visibility.value)
        return doc

    def _open(self) -> Any:
        with self._lock:
            return self._open_locked()

    def _open_locked(self) -> Any:
        pid = os.getpid()
        if self._index is None or self._pid != pid:
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                self._index = tantivy.Index(self._schema, path=str(self.path), reuse=True)
            except ValueError as exc:  # an index of another schema/version sits there
                raise PermanentError(f"cannot open the BM25 index at {self.path}: {exc}") from exc
            # Custom analyzers are not persisted with the index: every process registers it after opening.
            self._index.register_tokenizer(ANALYZER, _analyzer())
            # We reload ourselves when meta.json changes; tantivy's watcher thread would not survive a fork.
            self._index.config_reader(reload_policy="manual")
            self._pid, self._meta_stamp = pid, None
        return self._index

    def _searcher(self) -> Any:
        with self._lock:
            index = self._open()
            try:
                st = os.stat(self.path / "meta.json")
                stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
            except FileNotFoundError:
                stamp = (0, 0, 0)
            if stamp != self._meta_stamp:  # another process (or our writer) committed
                index.reload()
                self._meta_stamp = stamp
            return index.searcher()

    def _writer(self) -> _Writer:
        return _Writer(self._open(), self)

    def _new_writer(self, index: Any) -> Any:
        with self._lock:
            return index.writer(heap_size=WRITER_HEAP, num_threads=1)

    def _invalidate(self) -> None:
        with self._lock:
            self._meta_stamp = None


class _Writer:
    """A writer held for one batch: waits for another process's writer lock, commits once, releases."""

    def __init__(self, index: Any, owner: EmbeddedBM25) -> None:
        self._index, self._owner = index, owner
        self._writer: Any = None

    def __enter__(self) -> Any:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                self._writer = self._owner._new_writer(self._index)
                return self._writer
            except ValueError as exc:
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise TransientError(f"BM25 index is busy: {exc}") from exc
                time.sleep(0.1)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self._writer.commit()
            else:
                self._writer.rollback()
            self._writer.wait_merging_threads()  # also drops the writer lock for the next process
        finally:
            self._writer = None
            self._owner._invalidate()


_LIVE: weakref.WeakSet[EmbeddedBM25] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # A lock held by another thread at fork time would stay held forever in the child (Celery prefork);
    # the child also reopens the index (`_open` compares pids).
    for index in list(_LIVE):
        index._lock = threading.RLock()


os.register_at_fork(after_in_child=_after_fork_in_child)
