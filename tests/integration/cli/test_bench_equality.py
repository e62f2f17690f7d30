"""The text caches change nothing a bench scores: the same decision set run with the caches off, then on
(cold), then on again (warm, as in a long-lived worker) gives identical rows — retrieved ids, route,
answer, citations, stop reason, hops, recall by hop. The same code path each time; only the caches differ,
so the check stays valid whatever the reasoner's rules become."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cli.bench import run_bench
from config.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
COMPARED = ("route", "status", "retrieved", "answer", "citations", "stop_reason", "hops", "recall_by_hop",
            "evidence_tokens")


def _subset(folder: Path, every: int) -> tuple[Path, int]:
    """Every `every`-th labelled question (25+ questions, all routes: greetings, lookups, comparisons,
    multi-hop,
    out-of-corpus), over the bundled knowledge base."""
    lines = (EXAMPLES / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
    picked = [line for n, line in enumerate(lines) if line.strip() and n % every == 0]
    routes = {json.loads(line)["route"] for line in picked}
    assert routes >= {"direct", "lookup", "multi_part", "multi_hop", "out_of_corpus"}, routes
    (folder / "kb").symlink_to(EXAMPLES / "kb")
    file = folder / "decisions.jsonl"
    file.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return file, len(picked)


def _run(settings: Settings, dataset: Path, out: Path) -> list[dict[str, Any]]:
    run_bench(settings, dataset, mode="agentic", k=10, out=out, executor="inline", limit=None, workers=1,
              concurrency=1, console=Console(quiet=True), decisions=True)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _scored(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": r["id"], **{f: r[f] for f in COMPARED}} for r in rows]


def test_bench_rows_are_identical_with_and_without_the_text_caches(
    tmp_path: Path, redis_url: str, redis_prefix: str, embeddings_dir: Path
) -> None:
    dataset, asked = _subset(tmp_path, every=3)
    base = Settings(
        home=tmp_path / "home",
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        subquery_cache_ttl=0,
        embeddings_dir=embeddings_dir,
    )
    uncached = _run(base.model_copy(update={"text_cache": False}), dataset, tmp_path / "off.jsonl")
    cold = _run(base.model_copy(update={"text_cache": True}), dataset, tmp_path / "cold.jsonl")
    warm = _run(base.model_copy(update={"text_cache": True}), dataset, tmp_path / "warm.jsonl")

    assert len(uncached) == asked
    assert any(r["retrieved"] for r in uncached) and any(r["answer"] for r in uncached)
    assert _scored(cold) == _scored(uncached)
    assert _scored(warm) == _scored(uncached)


def test_an_inline_bench_times_warm_investigations(
    tmp_path: Path, redis_url: str, redis_prefix: str, embeddings_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedding model is loaded before the first investigation starts (as in a worker process after
    `workers.runtime.warm_up`): the run's investigations/s is not the model's load time spread over them."""
    from tasks import inline

    dataset, _ = _subset(tmp_path, every=9)
    loaded_at_start: list[bool] = []
    real = inline.run

    def run(services: Any, inv_id: str, **kwargs: Any) -> None:
        loaded_at_start.append(bool(services.embedder._sessions))  # the ONNX session(s) built so far
        real(services, inv_id, **kwargs)

    monkeypatch.setattr(inline, "run", run)
    settings = Settings(home=tmp_path / "home", redis_url=redis_url, redis_prefix=redis_prefix,
                        subquery_cache_ttl=0, embeddings_dir=embeddings_dir)
    run_bench(
        settings,
        dataset,
        mode="agentic",
        k=10,
        out=tmp_path / "rows.jsonl",
        executor="inline",
        limit=2,
        workers=1,
        concurrency=1,
        console=Console(quiet=True),
        decisions=True,
    )
    assert loaded_at_start == [True, True]
