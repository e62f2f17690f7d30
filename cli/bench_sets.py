"""The question sets of `sleuth bench`: a benchmark folder, a decision set or another corpus, read into one
`BenchSet`, and the throwaway tenant that holds its corpus."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from bootstrap import Services
from cli import progress
from cli.bench_metrics import expected_route
from cli.splits import select
from investigation.errors import NotFound, ValidationFailed


@dataclass(frozen=True)
class BenchSet:
    """What one run asks (normalised question rows) and which corpus the tenant holds."""

    name: str
    corpus: tuple[Path, ...]
    corpus_name: str
    questions: list[dict[str, Any]]


def _read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise ValidationFailed("dataset_dir", f"no such file: {path}")
    return [(n, json.loads(line)) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if line.strip()]


def _corpus_paths(folder: Path) -> tuple[Path, ...]:
    passages = folder / "passages.jsonl"
    if passages.is_file():
        return (passages,)
    if (folder / "kb").is_dir():
        return (folder / "kb",)
    if folder.exists():
        return (folder,)
    raise ValidationFailed("corpus_dir", f"no such folder: {folder}")


def load_set(dataset_dir: Path, *, decisions: bool, corpus_dir: Path | None, limit: int | None,
             split: str | None = None, kb_dir: Path | None = None) -> BenchSet:
    """Questions normalised to {id, question, gold, answers, type, expected_route, in_corpus}; with `split`,
    only that frozen half (cli/splits.py), taken before `limit`. `kb_dir` is the decision set's own corpus
    when it does not sit next to decisions.jsonl (a paraphrase probe asks another set's KB)."""
    if kb_dir is not None and not decisions:
        raise ValidationFailed("kb_dir", "names a decision set's knowledge base: use it with --decisions")
    if kb_dir is not None and not kb_dir.is_dir():
        raise ValidationFailed("kb_dir", f"no such folder: {kb_dir}")
    rows: list[dict[str, Any]] = []
    if decisions:
        file = dataset_dir if dataset_dir.suffix == ".jsonl" else dataset_dir / "decisions.jsonl"
        for n, raw in _read_jsonl(file):
            for field in ("question", "route"):
                if field not in raw:
                    raise ValidationFailed(f"{file.name}:{n}: {field}", "missing")
            if raw.get("audience", "agent") not in ("agent", "customer"):
                raise ValidationFailed(f"{file.name}:{n}: audience", "must be agent or customer")
            answers = [raw["answer"]] if raw.get("answer") else []
            rows.append({"id": raw.get("id") or f"{file.stem}-{n:03d}", "question": raw["question"],
                         "gold": list(raw.get("gold_source_ids") or []),
                         "answers": [*answers, *(raw.get("answer_aliases") or [])], "type": raw["route"],
                         "route": raw["route"], "audience": raw.get("audience", "agent")})
        home = kb_dir or file.parent
    else:
        file = dataset_dir / "questions.jsonl"
        for n, raw in _read_jsonl(file):
            for field in ("id", "question", "gold_passage_ids"):
                if field not in raw:
                    raise ValidationFailed(f"{file.name}:{n}: {field}", "missing")
            rows.append({"id": raw["id"], "question": raw["question"], "gold": list(raw["gold_passage_ids"]),
                         "answers": [a for a in [raw.get("answer"), *(raw.get("answer_aliases") or [])] if a],
                         "type": raw.get("type")})
        home = dataset_dir
    rows = select(rows, split)
    rows = rows[:limit] if limit else rows
    corpus = _corpus_paths(corpus_dir) if corpus_dir else _corpus_paths(home)
    other = corpus_dir is not None and {p.resolve() for p in corpus} != {
        p.resolve() for p in _corpus_paths(home)
    }
    corpus_ids = _corpus_ids(corpus) if other else None
    for row in rows:
        expected = expected_route(row)
        row["in_corpus"] = (
            corpus_ids is None or all(g in corpus_ids for g in row["gold"]) and bool(row["gold"])
        )
        if not row["in_corpus"] and expected != "direct":
            expected = "out_of_corpus"  # its evidence is not in this tenant: the right outcome is a refusal
        row["expected_route"] = expected
    corpus_name = (corpus_dir or home).resolve().name
    name = f"{dataset_dir.resolve().name}{' (decisions)' if decisions else ''}"
    if other:
        name += f" vs corpus {corpus_name}"
    if split:
        name += f" [{split}]"
    return BenchSet(name=name, corpus=corpus, corpus_name=corpus_name, questions=rows)


def _corpus_ids(corpus: tuple[Path, ...]) -> set[str]:
    from adapters.search.ingest import load_documents

    return {d.id for d in load_documents(list(corpus))}


def _digest(paths: tuple[Path, ...]) -> str:
    sha = hashlib.sha1()
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            sha.update(file.name.encode())
            sha.update(file.read_bytes())
    return sha.hexdigest()[:10]


def _bench_tenant(services: Services, bench: BenchSet, console: Console) -> str:
    """A throwaway tenant per corpus content; ingested once, then reused (cached)."""
    from adapters.search.ingest import ingest, load_documents
    from storage import repositories as repo

    name = f"bench-{bench.corpus_name}-{_digest(bench.corpus)}"[:100]
    with services.session() as session:
        try:
            tenant_id = repo.get_tenant_by_name(session, name=name).id
        except NotFound:
            tenant_id = repo.create_tenant(session, name=name, box=services.secret_box())[0].id
    if all(b.count(tenant_id) > 0 for b in services.backends.values()):
        return tenant_id
    docs = load_documents(list(bench.corpus))
    console.print(f"ingesting {len(docs)} documents into tenant {name} …")
    started = time.perf_counter()
    with progress.bar(console, "indexing chunks") as update:
        report = ingest(docs, tenant=tenant_id, backends=list(services.backends.values()),
                        max_words=services.settings.engines.chunk_tokens, progress=update)
    secs = time.perf_counter() - started
    console.print(f"ingested {len(docs)} documents ({report.chunks} chunks) in {secs:.1f}s "
                  f"({len(docs) / secs:.1f} documents/s)")
    return tenant_id
