"""What an ingest already wrote: a content hash per document, per tenant and set of engines, so a
re-ingest writes only new or changed documents and reports the rest as unchanged.

The manifest is a hint, checked against the engines: if an engine holds a different number of chunks
for the tenant than the manifest says (an index wiped or written by someone else), it is ignored and
everything is written again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_VERSION = 1


@dataclass
class Plan:
    """Which documents to write, and what the manifest will hold once they are written."""

    new: list[Any] = field(default_factory=list)
    changed: list[Any] = field(default_factory=list)
    unchanged: list[Any] = field(default_factory=list)
    trusted: bool = True

    @property
    def to_write(self) -> list[Any]:
        return self.new + self.changed


def doc_hash(doc: Any, max_words: int) -> str:
    """The document's content and the chunking parameters: a change to either re-indexes it."""
    body = json.dumps([MANIFEST_VERSION, max_words, doc.model_dump(mode="json")], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def path_for(index_dir: Path, tenant_id: str, engines: Sequence[str]) -> Path:
    return index_dir / "manifests" / f"{tenant_id}--{'-'.join(sorted(engines))}.json"


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) and data.get("version") == MANIFEST_VERSION else {}
    except (OSError, ValueError):
        return {}


def plan(documents: Sequence[Any], manifest: dict[str, Any], counts: Sequence[int], max_words: int) -> Plan:
    """Split `documents` by the manifest; every document is new if the engines disagree with it."""
    known: dict[str, str] = manifest.get("documents", {})
    expected = int(manifest.get("chunks", -1))
    result = Plan(trusted=bool(known) and all(c == expected for c in counts))
    for doc in documents:
        old = known.get(doc.id) if result.trusted else None
        if old is None:
            result.new.append(doc)
        elif old == doc_hash(doc, max_words):
            result.unchanged.append(doc)
        else:
            result.changed.append(doc)
    return result


def save(path: Path, documents: dict[str, str], chunks: int) -> None:
    """`documents`: id → `doc_hash`, for every document the engines hold; `chunks`: their chunk count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"version": MANIFEST_VERSION, "chunks": chunks, "documents": documents}))
    tmp.replace(path)
