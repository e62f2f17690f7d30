"""A tiny deterministic Embedder for pure tests: hashed bag of word stems, unit-normalised."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from investigation.state import Evidence, Grade, Passage, Visibility
from investigation.text import content_words, stem


class BagOfWordsEmbedder:
    """Texts sharing words get similar vectors; no model, no randomness."""

    dim = 64
    model_id = "fake-bow"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vector = [0.0] * self.dim
            for word in content_words(text):
                slot = int(hashlib.md5(stem(word).encode()).hexdigest(), 16) % self.dim
                vector[slot] += 1.0
            norm = math.sqrt(sum(v * v for v in vector)) or 1.0
            out.append([v / norm for v in vector])
        return out


def passage(chunk_id: str, title: str, text: str, *, engine: str = "bm25", rank: int = 1,
            score: float = 1.0, visibility: Visibility = Visibility.PUBLIC) -> Passage:
    return Passage(chunk_id=chunk_id, source_id=chunk_id.split("#")[0], title=title, text=text,
                   score=score, engine=engine, rank=rank, visibility=visibility)


def evidence(chunk_id: str, title: str, text: str, *, grade: Grade = Grade.CORRECT, score: float = 0.7,
             hop: int = 1, query: str = "q", visibility: Visibility = Visibility.PUBLIC) -> Evidence:
    return Evidence(id=f"ev_{chunk_id}", chunk_id=chunk_id, source_id=chunk_id.split("#")[0], title=title,
                    text=text, score=score, grade=grade, hop=hop, query=query, visibility=visibility)
