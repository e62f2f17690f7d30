"""Knowledge-base ingest: load documents (.jsonl, .md, .txt, folders), chunk them, write them to every engine.

A document is `public` unless it says `"visibility": "internal"` (a JSONL field, or a front matter block
`---` / `visibility: internal` / `---` at the top of a .md/.txt file, which may also set id, title, url,
updated_at and acl).

Everything is validated before anything is written, so a bad file never leaves a half-ingested corpus.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from investigation.errors import ValidationFailed
from investigation.ports import SearchBackend
from investigation.state import Chunk, Visibility

EXTENSIONS = (".jsonl", ".md", ".txt")
UPSERT_BATCH = 2048  # chunks per backend call: bounds memory; the vector store rewrites once per batch
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_KEYS = ("id", "title", "url", "updated_at", "visibility", "acl")


class SourceDocument(BaseModel):
    """One document of a knowledge base, as loaded (before chunking)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = Field(min_length=1)
    title: str
    text: str
    url: str | None = None
    updated_at: str | None = None
    acl: tuple[str, ...] = ()
    visibility: Visibility = Visibility.PUBLIC

    @field_validator("id", "text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


class IngestReport(BaseModel):
    """What one ingest did. `removed`: chunks of these documents already indexed, deleted before writing
    (replaced or stale), the most any one backend reported."""

    model_config = ConfigDict(frozen=True)

    documents: int
    chunks: int
    removed: int
    seconds: float
    backend_seconds: dict[str, float] = {}


# -- loading ----------------------------------------------------------------------------------------


def load_documents(paths: Sequence[Path]) -> list[SourceDocument]:
    """Load and validate every document; raise `ValidationFailed` naming "file:line: field" on the first
    problem (the message counts the others) and return nothing unless everything is valid."""
    problems: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    documents: list[SourceDocument] = []
    for path, label in _files(paths, problems):
        for where, record in _records(path, label, problems):
            try:
                doc = SourceDocument.model_validate(record)
            except ValidationError as exc:
                for err in exc.errors():
                    name = ".".join(str(p) for p in err["loc"]) or "record"
                    problems.append((f"{where}: {name}", err["msg"]))
                continue
            if doc.id in seen:
                problems.append((f"{where}: id", f"duplicate id {doc.id!r} (first at {seen[doc.id]})"))
                continue
            seen[doc.id] = where
            documents.append(doc)
    if problems:
        field, message = problems[0]
        # Every problem is named (up to 20), so one run of `sleuth ingest` shows everything to fix.
        more = "".join(f"; {f}: {m}" for f, m in problems[1:20])
        more += f" (and {len(problems) - 20} more problem(s))" if len(problems) > 20 else ""
        raise ValidationFailed(field, message + more)
    return documents


def _files(paths: Sequence[Path], problems: list[tuple[str, str]]) -> Iterator[tuple[Path, str]]:
    """Files to read with the label errors use: the file name, or its path inside a given folder."""
    found: list[tuple[Path, str]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in file.relative_to(path).parts)
                if file.is_file() and file.suffix.lower() in EXTENSIONS and not hidden:
                    found.append((file, file.relative_to(path).as_posix()))
        elif not path.exists():
            problems.append((path.name or str(path), f"no such file or folder: {path}"))
        elif path.suffix.lower() not in EXTENSIONS:
            problems.append((path.name, f"unsupported file type (expected one of {', '.join(EXTENSIONS)})"))
        else:
            found.append((path, path.name))
    labels = [label for _, label in found]
    for path, label in found:
        # Same short label twice (a/kb.jsonl, b/kb.jsonl): fall back to the full path to stay unambiguous.
        yield path, (str(path) if labels.count(label) > 1 else label)


def _records(path: Path, label: str, problems: list[tuple[str, str]]) -> Iterator[tuple[str, Any]]:
    try:
        content = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        problems.append((label, "not UTF-8 text"))
        return
    if path.suffix.lower() != ".jsonl":
        yield label, _plain_document(path, content)
        return
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{label}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append((f"{where}: line", f"invalid JSON ({exc.msg})"))
            continue
        if not isinstance(record, dict):
            problems.append((f"{where}: line", "expected a JSON object"))
            continue
        yield where, record


def front_matter(content: str) -> tuple[dict[str, Any], str]:
    """A leading `---` block of `key: value` lines (id, title, url, updated_at, visibility, acl as a
    comma-separated or [bracketed] list) and the content after it; ({}, content) when there is none."""
    match = _FRONT_MATTER.match(content)
    if not match:
        return {}, content
    fields: dict[str, Any] = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip().lower(), value.strip().strip("\"'")
        if not sep or key not in _FRONT_KEYS or not value:
            continue
        if key == "acl":
            fields[key] = [p.strip(" \"'") for p in value.strip("[]").split(",") if p.strip(" \"'")]
        else:
            fields[key] = value.lower() if key == "visibility" else value
    return fields, content[match.end():]


def _plain_document(path: Path, content: str) -> dict[str, Any]:
    """A .md/.txt file: id = slug of the file name, title = first markdown heading or the file name; a
    front matter block may set visibility (and id, title, url, updated_at, acl)."""
    fields, content = front_matter(content)
    title, text = path.stem, content
    heading = _HEADING.search(content) if path.suffix.lower() == ".md" else None
    if heading:
        title = heading.group(1)
        text = content[: heading.start()].rstrip() + "\n\n" + content[heading.end() :].lstrip()
    slug = re.sub(r"[^\w]+", "-", path.stem.lower()).strip("-_") or path.stem
    return {"id": slug, "title": title, "text": text, **fields}


# -- chunking ---------------------------------------------------------------------------------------


def chunk_document(doc: SourceDocument, max_words: int = 200, overlap_words: int = 30) -> list[Chunk]:
    """Split into chunks of at most `max_words` words, cutting between sentences (words only inside a
    run-on sentence) and preferring to start a chunk at a paragraph.

    Consecutive chunks share up to `overlap_words` words of whole sentences, so a fact that straddles a
    boundary is still found whole in one chunk.
    """
    if max_words < 1 or not 0 <= overlap_words < max_words:
        raise ValidationFailed("max_words", "need max_words >= 1 and 0 <= overlap_words < max_words")
    text = doc.text.strip()
    if len(text.split()) <= max_words:
        return [_chunk(doc, 0, text)]
    groups: list[list[tuple[str, int]]] = []
    current: list[tuple[str, int]] = []
    size = 0
    for unit, paragraph, paragraph_words in _units(text, max_words):
        words = len(unit.split())
        full = size + words > max_words
        # A paragraph that fits a chunk of its own starts one, unless that would leave this one half empty.
        new_paragraph = bool(current) and paragraph != current[-1][1] and size + paragraph_words > max_words
        if current and (full or (new_paragraph and paragraph_words <= max_words and 2 * size >= max_words)):
            groups.append(current)
            carry: list[tuple[str, int]] = []
            carried = 0
            for prev in reversed(current):  # whole trailing sentences, leaving room for the new unit
                n = len(prev[0].split())
                if carried + n > overlap_words or carried + n + words > max_words:
                    break
                carry.insert(0, prev)
                carried += n
            current, size = carry, carried
        current.append((unit, paragraph))
        size += words
    groups.append(current)
    return [_chunk(doc, position, _join(group)) for position, group in enumerate(groups)]


def _units(text: str, max_words: int) -> Iterator[tuple[str, int, int]]:
    """(sentence, paragraph number, words in that paragraph); a run-on sentence is cut into
    `max_words`-word pieces."""
    for number, paragraph in enumerate(p.strip() for p in _PARAGRAPHS.split(text)):
        paragraph_words = len(paragraph.split())
        for sentence in _SENTENCE_END.split(paragraph):
            words = sentence.split()
            for start in range(0, len(words), max_words):
                yield " ".join(words[start : start + max_words]), number, paragraph_words


def _join(group: list[tuple[str, int]]) -> str:
    out = group[0][0]
    for (unit, paragraph), (_, before) in zip(group[1:], group, strict=False):
        out += ("\n\n" if paragraph != before else " ") + unit
    return out


def _chunk(doc: SourceDocument, position: int, text: str) -> Chunk:
    return Chunk(
        chunk_id=f"{doc.id}#{position}", source_id=doc.id, title=doc.title, text=text, url=doc.url,
        updated_at=doc.updated_at, acl=doc.acl, position=position, visibility=doc.visibility,
    )


# -- ingest -----------------------------------------------------------------------------------------


def ingest(
    documents: Sequence[SourceDocument],
    *,
    tenant: str,
    backends: Sequence[SearchBackend],
    max_words: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Write `documents` to every backend for `tenant`, replacing earlier chunks of the same documents.

    Idempotent: the same documents give the same index. `progress(done, total)` counts chunk writes over
    all backends.
    """
    started = time.perf_counter()
    if not tenant or not tenant.strip():
        raise ValidationFailed("tenant", "must not be empty")
    places: dict[str, int] = {}
    for i, doc in enumerate(documents):
        if doc.id in places:
            raise ValidationFailed(
                f"documents[{i}]: id", f"duplicate id {doc.id!r} (also documents[{places[doc.id]}])"
            )
        places[doc.id] = i
    overlap = min(30, max_words // 4)
    chunks = [c for doc in documents for c in chunk_document(doc, max_words, overlap)]  # validate first
    source_ids = list(places)
    total, done, removed = len(chunks) * len(backends), 0, 0
    timings: dict[str, float] = {}
    for backend in backends:
        t0 = time.perf_counter()
        # Delete first so chunks a shorter new version no longer has do not linger.
        removed = max(removed, backend.delete(tenant, source_ids)) if source_ids else removed
        for start in range(0, len(chunks), UPSERT_BATCH):
            batch = chunks[start : start + UPSERT_BATCH]
            backend.upsert(tenant, batch)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        timings[backend.name] = round(time.perf_counter() - t0, 3)
    return IngestReport(
        documents=len(documents), chunks=len(chunks), removed=removed,
        seconds=round(time.perf_counter() - started, 3), backend_seconds=timings,
    )
