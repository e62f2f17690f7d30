"""`sleuth bench`: run a QA benchmark folder through the loop and print recall@k and cost figures."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from cli import processes
from cli.commands import wait_for
from config.settings import Settings
from investigation.errors import NotFound, ValidationFailed
from workers.wiring import Services

GRADE_ORDER = {"correct": 0, "ambiguous": 1, "incorrect": 2}


def _load_questions(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        for field in ("id", "question", "gold_passage_ids"):
            if field not in row:
                raise ValidationFailed(f"{path.name}:{n}: {field}", "missing")
        rows.append(row)
    return rows[:limit] if limit else rows


def _bench_tenant(services: Services, dataset_dir: Path, console: Console) -> str:
    """A throwaway tenant per corpus content; ingested once, then reused (cached)."""
    from adapters.search.ingest import ingest, load_documents
    from storage import repositories as repo

    passages = dataset_dir / "passages.jsonl"
    digest = hashlib.sha1(passages.read_bytes()).hexdigest()[:10]
    name = f"bench-{dataset_dir.resolve().name}-{digest}"[:100]
    with services.session() as session:
        try:
            tenant_id = repo.get_tenant_by_name(session, name=name).id
        except NotFound:
            tenant_id = repo.create_tenant(session, name=name)[0].id
    if all(b.count(tenant_id) > 0 for b in services.backends.values()):
        return tenant_id
    docs = load_documents([passages])
    console.print(f"ingesting {len(docs)} passages into tenant {name} …")
    started = time.perf_counter()
    report = ingest(docs, tenant=tenant_id, backends=list(services.backends.values()),
                    max_words=services.settings.chunk_tokens)
    secs = time.perf_counter() - started
    console.print(f"ingested {len(docs)} passages in {secs:.1f}s ({len(docs) / secs:.1f} passages/s): {report}")
    return tenant_id


def retrieved_sources(services: Services, inv_id: str, k: int) -> list[str]:
    """The final graded evidence ranking as source ids: the synthesis selection first, then the rest."""
    from storage import repositories as repo

    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        records = repo.list_evidence(session, investigation_id=inv_id)
    by_id = {r.evidence_id: r for r in records}
    ordered = [by_id[e] for e in inv.final_evidence_ids if e in by_id]
    rest = sorted((r for r in records if r.evidence_id not in set(inv.final_evidence_ids)),
                  key=lambda r: (GRADE_ORDER.get(r.grade, 3), -r.score))
    out: list[str] = []
    for r in ordered + rest:
        if r.source_id not in out:
            out.append(r.source_id)
    return out[:k]


def run_bench(settings: Settings, dataset_dir: Path, *, mode: str, k: int, out: Path, executor: str,
              limit: int | None, workers: int, concurrency: int, console: Console) -> dict[str, Any]:
    from cli.commands import create_and_launch
    from storage import repositories as repo
    from tasks import inline

    if executor not in ("queue", "inline"):
        raise ValidationFailed("executor", "must be queue or inline")
    # Everything is queued at once, so a question may wait long before it runs: deadlines are generous.
    settings = settings.model_copy(update={"final_k": k, "deadline_seconds": 3600})
    questions = _load_questions(dataset_dir / "questions.jsonl", limit)
    tenant_id = _bench_tenant(Services(settings), dataset_dir, console)
    with Services(settings).session() as session:
        tenant_name = repo.get_tenant(session, tenant_id=tenant_id).name
    stack = (processes.queue_stack(settings, workers=workers, concurrency=concurrency,
                                   env={"SLEUTH_FINAL_K": str(k), "SLEUTH_DEADLINE_SECONDS": "3600"})
             if executor == "queue" else processes.state_redis(settings))
    with stack as live:
        services = Services(live)
        started = time.perf_counter()
        ids: list[str] = []
        if executor == "queue":
            ids = [create_and_launch(services, tenant_name, q["question"], mode) for q in questions]
            views = [wait_for(services, i, timeout=600) for i in ids]
        else:
            views = []
            for q in questions:
                with services.session() as session:
                    tenant = repo.get_tenant(session, tenant_id=tenant_id)
                    inv, _ = repo.create_investigation(
                        session, tenant=tenant, question=q["question"], mode=mode, callback=None, budget={},
                        idempotency_key=None, deadline_seconds=settings.deadline_seconds)
                    ids.append(inv.id)
                inline.run(services, ids[-1], deliver=False)
                with services.session() as session:
                    views.append(repo.investigation_view(
                        session, investigation=repo.get_investigation(session, investigation_id=ids[-1])))
        wall = time.perf_counter() - started
        rows = [_row(services, q, inv_id, view, k) for q, inv_id, view in zip(questions, ids, views)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summary = _summary(rows, k, wall, mode, executor)
    print(json.dumps(summary, indent=2))
    return summary


def _row(services: Services, q: dict[str, Any], inv_id: str, view: dict[str, Any], k: int) -> dict[str, Any]:
    from datetime import datetime

    retrieved = retrieved_sources(services, inv_id, k)
    gold = list(q["gold_passage_ids"])
    created = datetime.fromisoformat(view["created_at"])
    finished = datetime.fromisoformat(view["finished_at"]) if view.get("finished_at") else created
    return {"id": q["id"], "status": view["status"], "route": view["route"], "retrieved": retrieved,
            "hops": view["hops"], "retrieval_calls": view["retrieval_calls"],
            "evidence_tokens": view["evidence_tokens"],
            "latency_ms": round((finished - created).total_seconds() * 1000, 1), "answer": view["answer"],
            "stop_reason": view["stop_reason"], "gold": gold, "type": q.get("type"),
            "recall": sum(g in retrieved for g in gold) / max(1, len(gold)),
            "recall@5": sum(g in retrieved[:5] for g in gold) / max(1, len(gold))}


def _summary(rows: list[dict[str, Any]], k: int, wall: float, mode: str, executor: str) -> dict[str, Any]:
    n = max(1, len(rows))

    def avg(key: str) -> float:
        return round(sum(float(r[key] or 0) for r in rows) / n, 4)

    stops: dict[str, int] = {}
    for r in rows:
        stops[str(r["stop_reason"])] = stops.get(str(r["stop_reason"]), 0) + 1
    return {"questions": len(rows), "mode": mode, "executor": executor, "k": k,
            f"recall@{k}": avg("recall"), "recall@5": avg("recall@5"),
            f"all_gold@{k}": round(sum(r["recall"] == 1.0 for r in rows) / n, 4),
            "avg_retrieval_calls": avg("retrieval_calls"), "avg_evidence_tokens": avg("evidence_tokens"),
            "avg_hops": avg("hops"), "max_hops": max((r["hops"] for r in rows), default=0),
            "avg_latency_ms": avg("latency_ms"), "wall_seconds": round(wall, 2),
            "investigations_per_second": round(len(rows) / wall, 3) if wall else None,
            "refused": sum(r["status"] == "refused" for r in rows),
            "failed": sum(r["status"] == "failed" for r in rows), "stop_reasons": stops}
