"""Embedded vector search behind the `SearchBackend` port: a flat cosine index (numpy), one store per tenant.

Each tenant's store is ONE file, `index_dir/vector/<tenant>/store.npz` (vectors + chunk metadata), replaced
atomically on every write, so a reader in another process sees either the old or the new store, never half.
A `version` file (a fresh token per write) tells readers to reload; writers serialize on a per-tenant `flock`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from adapters.search._common import check_query, check_tenant
from adapters.search.embedder import embed_matrix
from investigation.ports import Embedder
from investigation.state import Chunk, Passage, Visibility

FloatArray = npt.NDArray[np.float32]
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def chunk_embedding_text(chunk: Chunk) -> str:
    """What is embedded for a chunk: the title carries the entity the text talks about."""
    return f"{chunk.title}. {chunk.text}" if chunk.title else chunk.text


_READING = threading.Lock()  # reads of a store file (see `EmbeddedVectorIndex._load`)


@dataclass
class _Store:
    """One tenant's vectors and metadata, as loaded from disk (immutable once loaded)."""

    vectors: FloatArray
    meta: list[dict[str, Any]]
    version: str = ""
    row_of: dict[str, int] = field(default_factory=dict)
    public: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        self.row_of = {m["chunk_id"]: i for i, m in enumerate(self.meta)}
        self.public = np.array([not m.get("acl") for m in self.meta], dtype=bool)

    def visible(self, acl: Sequence[str]) -> npt.NDArray[np.bool_]:
        principals = set(acl)
        mask = self.public.copy()
        for i in np.flatnonzero(~self.public):  # only restricted chunks need a look
            if principals.intersection(self.meta[i]["acl"]):
                mask[i] = True
        return mask


class EmbeddedVectorIndex:
    """Cosine similarity over unit vectors from `embedder`; tenant isolation by separate stores."""

    name = "vector"

    def __init__(self, index_dir: Path, embedder: Embedder) -> None:
        self.root = Path(index_dir) / "vector"
        self.embedder = embedder
        self._stores: dict[str, _Store] = {}
        self._lock = threading.Lock()
        _LIVE.add(self)

    # -- port ---------------------------------------------------------------------------------------

    def upsert(self, tenant: str, chunks: Sequence[Chunk]) -> int:
        check_tenant(tenant)
        latest: dict[str, Chunk] = {c.chunk_id: c for c in chunks}  # last one wins within a batch
        if not latest:
            return 0
        # Embed before taking the lock: it is the slow part, and the embedder batches and caches.
        vectors = embed_matrix(self.embedder, [chunk_embedding_text(c) for c in latest.values()])
        with self._writing(tenant) as store:
            keep = [i for i, m in enumerate(store.meta) if m["chunk_id"] not in latest]
            meta = [store.meta[i] for i in keep] + [_meta(c) for c in latest.values()]
            matrix = np.concatenate([store.vectors[keep], vectors]) if keep else vectors
            self._save(tenant, matrix, meta)
        return len(latest)

    def delete(self, tenant: str, source_ids: Sequence[str]) -> int:
        check_tenant(tenant)
        doomed = set(source_ids)
        if not doomed:
            return 0
        with self._writing(tenant) as store:
            keep = [i for i, m in enumerate(store.meta) if m["source_id"] not in doomed]
            removed = len(store.meta) - len(keep)
            if removed:
                self._save(tenant, store.vectors[keep], [store.meta[i] for i in keep])
        return removed

    def delete_tenant(self, tenant: str) -> int:
        """Every vector of `tenant` (tenant removal): its folder goes, once emptied under its lock."""
        check_tenant(tenant)
        with self._writing(tenant) as store:
            removed = len(store.meta)
            folder = self._dir(tenant)
            for name in ("store.npz", "version"):
                (folder / name).unlink(missing_ok=True)
            with self._lock:
                self._stores.pop(tenant, None)
        shutil.rmtree(folder, ignore_errors=True)
        return removed

    def search(
        self, tenant: str, query: str, k: int, *, acl: Sequence[str] | None = None,
        visibility: Sequence[Visibility] | None = None,
    ) -> list[Passage]:
        check_tenant(tenant)
        check_query(query)
        store = self._load(tenant)
        if not store.meta or k <= 0:
            return []
        scores = store.vectors @ embed_matrix(self.embedder, [query], persist=False)[0]
        if acl is not None:
            scores = np.where(store.visible(acl), scores, -np.inf)
        if visibility is not None:
            allowed = {Visibility(v).value for v in visibility}
            shown = np.array([m.get("visibility", "public") in allowed for m in store.meta], dtype=bool)
            scores = np.where(shown, scores, -np.inf)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        passages: list[Passage] = []
        for i in top:
            if not np.isfinite(scores[i]):
                break  # only hidden chunks are left
            m = store.meta[i]
            passages.append(
                Passage(
                    chunk_id=m["chunk_id"], source_id=m["source_id"], title=m["title"], text=m["text"],
                    url=m.get("url"), score=float(scores[i]), engine=self.name, rank=len(passages) + 1,
                    visibility=Visibility(m.get("visibility", "public")),
                )
            )
        return passages

    def count(self, tenant: str) -> int:
        check_tenant(tenant)
        return len(self._load(tenant).meta)

    def ping(self) -> bool:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            return os.access(self.root, os.R_OK | os.W_OK)
        except OSError:
            return False

    # -- storage ------------------------------------------------------------------------------------

    def _dir(self, tenant: str) -> Path:
        # Tenant ids are not trusted as path parts; the hash keeps distinct tenants distinct after cleaning.
        digest = hashlib.sha1(tenant.encode()).hexdigest()[:10]
        return self.root / f"{_UNSAFE.sub('_', tenant)[:40]}-{digest}"

    def _load(self, tenant: str) -> _Store:
        folder = self._dir(tenant)
        # The version is read BEFORE the store: at worst we label a newer store with an older version,
        # which only costs one extra reload on the next search. (mtime/inode checks can miss a rewrite
        # of the same size within one clock tick; a token cannot.)
        try:
            version = (folder / "version").read_text()
        except FileNotFoundError:
            version = ""
        with self._lock:
            cached = self._stores.get(tenant)
            if cached is not None and cached.version == version:
                return cached
        try:
            # One thread at a time: numpy parses each array's header with `ast`, which Python 3.11 cannot
            # run in two threads at once (SystemError "AST constructor recursion depth mismatch").
            with _READING, np.load(folder / "store.npz", allow_pickle=False) as data:
                vectors = np.asarray(data["vectors"], dtype=np.float32)
                meta = json.loads(bytes(data["meta"]).decode())
        except FileNotFoundError:
            return _Store(np.zeros((0, self.embedder.dim), dtype=np.float32), [])
        store = _Store(vectors, meta, version)
        with self._lock:
            self._stores[tenant] = store
        return store

    @contextmanager
    def _writing(self, tenant: str) -> Iterator[_Store]:
        """Hold the tenant's write lock (across processes) and yield the current store."""
        folder = self._dir(tenant)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "a+b") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                yield self._load(tenant)  # read under the lock: no lost update from a concurrent writer
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    def _save(self, tenant: str, vectors: FloatArray, meta: list[dict[str, Any]]) -> None:
        folder = self._dir(tenant)
        blob = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode(), dtype=np.uint8)
        _atomic_write(
            folder / "store.npz", lambda fh: np.savez(fh, vectors=vectors.astype(np.float32), meta=blob)
        )
        _atomic_write(folder / "version", lambda fh: fh.write(uuid.uuid4().hex.encode()))
        with self._lock:
            self._stores.pop(tenant, None)


def _atomic_write(target: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write to a temp file in the same folder, fsync, then rename over `target` (atomic on POSIX)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _meta(chunk: Chunk) -> dict[str, Any]:
    return {
        "chunk_id": chunk.chunk_id, "source_id": chunk.source_id, "title": chunk.title,
        "text": chunk.text, "url": chunk.url, "acl": list(chunk.acl), "position": chunk.position,
        "visibility": chunk.visibility.value,
    }


_LIVE: weakref.WeakSet[EmbeddedVectorIndex] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # A lock held by another thread at fork time would stay held forever in the child (Celery prefork).
    global _READING
    _READING = threading.Lock()
    for index in list(_LIVE):
        index._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
