"""Local sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) behind the `Embedder` port, with a disk cache.

The model runs in-process with onnxruntime; vectors are cached by content hash in SQLite (shared by every
process on the host) and in a small in-memory LRU, so re-ingesting unchanged content costs no inference.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from adapters.search.embedding_store import (
    DIM,
    FloatArray,
    RedisVectors,
    default_model_path,
    default_tokenizer_path,
    load_session,
    load_tokenizer,
)
from investigation.errors import PermanentError
from investigation.ports import Embedder
from storage.db import enter_wal

BATCH_SIZE = 32
# Up to this many texts at once (a query, a question with its sub-queries) run on the one-thread session.
SMALL_BATCH = 8
LRU_SIZE = 4096
# SQLite caps bound parameters (999 on old builds); stay well under it.
SQL_CHUNK = 500

class MiniLMEmbedder:
    """all-MiniLM-L6-v2: text → unit-norm 384-d vectors (mean pooling), truncated at `max_tokens`."""

    dim: int = DIM

    def __init__(
        self,
        cache_dir: Path | None = None,
        max_tokens: int = 128,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        threads: int = 2,
        shared: RedisVectors | None = None,
    ) -> None:
        if not 8 <= max_tokens <= 512:
            raise PermanentError(f"max_tokens must be within 8..512, got {max_tokens}")
        self.max_tokens = max_tokens
        self.model_id = "all-MiniLM-L6-v2-onnx-int8"
        self._model_path = model_path or default_model_path()
        self._tokenizer_path = tokenizer_path or default_tokenizer_path()
        for what, path in (("embedding model", self._model_path), ("tokenizer", self._tokenizer_path)):
            if not Path(path).is_file():
                raise PermanentError(f"{what} file not found: {path} (reinstall with `make install`)")
        self._cache_path = Path(cache_dir) / "embeddings.sqlite" if cache_dir is not None else None
        self._shared = shared  # vectors that are not persisted (queries), across processes
        # Two threads at most: several worker processes share the host, and more threads barely help a
        # 6-layer model on short inputs.
        self._threads = max(1, min(threads, 2, os.cpu_count() or 1))
        self._lru: OrderedDict[str, FloatArray] = OrderedDict()
        self._lock = threading.Lock()
        # Built lazily and per process: onnxruntime sessions and SQLite connections must not cross a fork.
        self._pid: int | None = None
        self._sessions: dict[int, Any] = {}  # intra-op threads → session
        self._tokenizer: Any = None
        self._db: sqlite3.Connection | None = None
        # Queries embedded ahead of their search (`prepare`): content key → the run computing it.
        self._ahead: ThreadPoolExecutor | None = None
        self._inflight: dict[str, Future[None]] = {}
        _LIVE.add(self)

    # -- public -------------------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-norm vectors, one per text, in input order."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str], *, persist: bool = True) -> FloatArray:
        """Same as `embed`, as a float32 matrix (n × 384); what the vector index uses. `persist=False`
        keeps new vectors in memory only: queries and grading must not grow the on-disk cache.

        The lock guards the caches and the lazy loading, not the model run: two threads embedding
        different texts (a hop's two vector slots) run the model at once, one core each, the same vectors
        as one after the other (each run is one text on a one-thread session; the run is thread-safe)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        if not persist:
            self._await_prepared(keys)
        return self._embed(texts, keys, persist=persist)

    def _embed(self, texts: Sequence[str], keys: list[str], *, persist: bool) -> FloatArray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        with self._lock:
            found = self._lookup(keys)
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in missing:
                missing[key] = text
        shared = self._shared if not persist else None
        if missing and shared is not None:
            from_shared = shared.get(list(missing))
            with self._lock:
                for key, vec in from_shared.items():
                    self._remember(key, vec)
            found.update(from_shared)
            for key in from_shared:
                del missing[key]
        if missing:
            with self._lock:
                model = self._load(self.threads_for(len(missing)))
            new = dict(zip(missing.keys(), self._infer(model, list(missing.values())), strict=True))
            with self._lock:
                self._store(new, persist=persist)
            if shared is not None:
                shared.put(new)
            found.update(new)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out

    def prepare(self, texts: Sequence[str]) -> None:
        """Start embedding queries that are about to be searched, in the background, each in its own run
        (the vectors `embed_array(..., persist=False)` gives: same session, one text per run) and as
        `persist=False` does (memory, and the Redis share). A step calls it as soon as it knows the next
        hop's queries: the model then runs while the step writes its results and the hop's retrievals are
        dispatched, instead of at the start of the vector search. A search that needs a query being
        prepared waits for it, or takes it over if its run has not started; a failed run is only a miss."""
        with self._lock:
            todo: dict[str, str] = {}
            for text in texts:
                key = self._key(text)
                if text.strip() and key not in self._lru and key not in self._inflight:
                    todo[key] = text
            if not todo:
                return
            if self._ahead is None:  # two runs at once: a hop's vector slots search on both cores
                self._ahead = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed-ahead")
            for key, text in todo.items():
                self._inflight[key] = self._ahead.submit(self._embed_ahead, key, text)

    def preparing(self) -> bool:
        """Whether a query handed to `prepare` is still being embedded (or waits for its run)."""
        with self._lock:
            return any(not run.done() for run in self._inflight.values())

    def _embed_ahead(self, key: str, text: str) -> None:
        try:
            self._embed([text], [key], persist=False)
        finally:
            with self._lock:
                self._inflight.pop(key, None)

    def _await_prepared(self, keys: list[str]) -> None:
        with self._lock:
            runs = {k: run for k in keys if (run := self._inflight.get(k)) is not None}
        for key, run in runs.items():
            if run.cancel():  # not started: the caller embeds the text itself, now
                with self._lock:
                    self._inflight.pop(key, None)
                continue
            try:  # running: its vector is ready sooner than a run of our own
                run.result()
            except Exception:  # noqa: BLE001,S110 - a failed run is a miss: the caller embeds the text
                pass

    def close(self) -> None:
        """Release the SQLite connection (the session is dropped with the object)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    # -- cache --------------------------------------------------------------------------------------

    def _key(self, text: str) -> str:
        return hashlib.sha1(f"{self.model_id}\x1f{self.max_tokens}\x1f{text}".encode()).hexdigest()

    def _lookup(self, keys: list[str]) -> dict[str, FloatArray]:
        found: dict[str, FloatArray] = {}
        for key in keys:
            vec = self._lru.get(key)
            if vec is not None:
                self._lru.move_to_end(key)
                found[key] = vec
        rest = list({k for k in keys if k not in found})
        db = self._connection()
        if db is not None and rest:
            for part in _chunks(rest, SQL_CHUNK):
                marks = ",".join("?" * len(part))
                rows = db.execute(f"SELECT key, vec FROM embeddings WHERE key IN ({marks})", part)
                for key, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape == (DIM,):  # ignore a corrupt row: it is recomputed and overwritten
                        found[key] = vec
                        self._remember(key, vec)
        return found

    def _store(self, new: dict[str, FloatArray], *, persist: bool) -> None:
        for key, vec in new.items():
            self._remember(key, vec)
        db = self._connection() if persist else None
        if db is not None:
            with db:  # one transaction per batch: WAL keeps readers in other processes unblocked
                db.executemany(
                    "INSERT OR REPLACE INTO embeddings (key, vec) VALUES (?, ?)",
                    [(k, v.astype(np.float32).tobytes()) for k, v in new.items()],
                )

    def _remember(self, key: str, vec: FloatArray) -> None:
        self._lru[key] = vec
        self._lru.move_to_end(key)
        while len(self._lru) > LRU_SIZE:
            self._lru.popitem(last=False)

    def _connection(self) -> sqlite3.Connection | None:
        if self._cache_path is None:
            return None
        self._ensure_process()
        if self._db is None:
            self._cache_path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self._cache_path, timeout=30.0, check_same_thread=False)
            db.execute("PRAGMA busy_timeout = 30000")
            enter_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
            db.commit()
            self._db = db
        return self._db

    # -- inference ----------------------------------------------------------------------------------

    def _ensure_process(self) -> None:
        pid = os.getpid()
        if self._pid != pid:  # first use, or we are a forked child: never reuse the parent's handles
            self._pid = pid
            self._sessions = {}
            self._tokenizer = None
            self._db = None

    def threads_for(self, count: int) -> int:
        """Intra-op threads of the session that embeds `count` texts at once. A query (a few texts) runs
        on a one-thread session: no pool thread, so nothing spins after the run (a two-thread session's pool
        thread spins after every query, doubling its CPU), and nothing to hang in a forked child. Batches
        (ingest) use `threads`. A
        process that only answers questions loads only the one-thread session."""
        return 1 if count <= SMALL_BATCH else self._threads

    def _load(self, threads: int) -> tuple[Any, Any]:
        self._ensure_process()
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self._tokenizer_path, self.max_tokens)
        if threads not in self._sessions:
            self._sessions[threads] = load_session(self._model_path, threads)
        return self._sessions[threads], self._tokenizer

    def _infer(self, model: tuple[Any, Any], texts: list[str]) -> list[FloatArray]:
        session, tokenizer = model
        encodings = tokenizer.encode_batch(texts)
        # Sort by length so each batch pads to a similar length: far less wasted compute.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        result: list[FloatArray] = [np.empty(0, dtype=np.float32)] * len(texts)
        for batch in _chunks(order, BATCH_SIZE):
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                enc = encodings[i]
                ids[row, : len(enc.ids)] = enc.ids
                mask[row, : len(enc.ids)] = enc.attention_mask
            hidden = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
            for row, i in enumerate(batch):
                result[i] = pooled[row]
        return result


_LIVE: weakref.WeakSet[MiniLMEmbedder] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # A lock held by another thread at fork time would stay held forever in the child (Celery prefork), and
    # an ONNX Runtime session does not survive fork (its thread pool stays in the parent): the child loads
    # its own on first use.
    for embedder in list(_LIVE):
        embedder._lock = threading.Lock()
        embedder._sessions = {}
        embedder._ahead, embedder._inflight = None, {}  # the parent's threads are not in the child


os.register_at_fork(after_in_child=_after_fork_in_child)


def embed_matrix(embedder: Embedder, texts: Sequence[str], *, persist: bool = True) -> FloatArray:
    """`texts` as an n × dim float32 matrix from any Embedder; MiniLM skips the list round trip and honours
    `persist` (see `MiniLMEmbedder.embed_array`)."""
    if isinstance(embedder, MiniLMEmbedder):
        return embedder.embed_array(texts, persist=persist)
    return np.asarray(embedder.embed(texts), dtype=np.float32).reshape(len(texts), embedder.dim)


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


__all__ = ["BATCH_SIZE", "DIM", "FloatArray", "MiniLMEmbedder", "RedisVectors", "default_model_path",
           "default_tokenizer_path", "embed_matrix"]
