"""`sleuth bench`: run a labelled question set through the loop; print and write recall, cost, decision,
refusal, loop-health and answer figures (one JSON line per question in `--out`, optionally an HTML report).

Three kinds of runs, one code path:
- a benchmark folder (`passages.jsonl` + `questions.jsonl`, gold passage ids, answers);
- `--decisions`: a labelled decision set (`decisions.jsonl`: route, gold source ids, answer) over the
  folder's `kb/` — the bundled support knowledge base when the folder is `examples/`; `--kb-dir` names
  another folder's `kb/` (the paraphrase probe, `examples/paraphrase/`, asks the original sets' KBs);
- `--corpus-dir OTHER`: the questions against another dataset's passages, where their gold is absent, so
  the right outcome of every such question is a refusal (`out_of_corpus`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from bootstrap import Services
from cli import processes, progress
from cli.bench_metrics import answer_scores, decision_of, hop_stats, recall, summarise
from cli.bench_sets import BenchSet, _bench_tenant, _read_jsonl, load_set
from cli.commands import wait_for
from config.settings import Settings
from investigation.errors import ValidationFailed
from investigation.guards import untrusted

if TYPE_CHECKING:
    from investigation.state import Evidence
    from storage.models import EvidenceRecord

# The question sets are read in `cli.bench_sets`; `BenchSet` and `load_set` are importable from here too.
__all__ = ["BenchSet", "load_set", "retrieved_sources", "run_bench"]

GRADE_ORDER = {"correct": 0, "ambiguous": 1, "incorrect": 2}


def _ranking(ordered: list[EvidenceRecord], rest: list[EvidenceRecord], k: int) -> list[str]:
    rest = sorted(rest, key=lambda r: (GRADE_ORDER.get(str(r.grade), 3), -r.score))
    out: list[str] = []
    for r in ordered + rest:
        if r.source_id not in out:
            out.append(r.source_id)
    return out[:k]


def retrieved_sources(services: Services, inv_id: str, k: int) -> list[str]:
    """The final graded evidence ranking as source ids: the synthesis selection first, then the rest."""
    from storage import repositories as repo

    with services.session() as session:
        inv = repo.get_investigation(session, investigation_id=inv_id)
        records = repo.list_evidence(session, investigation_id=inv_id)
    by_id = {r.evidence_id: r for r in records}
    final = set(inv.final_evidence_ids)
    return _ranking([by_id[e] for e in inv.final_evidence_ids if e in by_id],
                    [r for r in records if r.evidence_id not in final], k)


def _evidence(r: EvidenceRecord) -> Evidence:
    from investigation.state import Evidence, Grade

    return Evidence(id=r.evidence_id, chunk_id=r.chunk_id, source_id=r.source_id, title=r.title, text=r.text,
                    score=r.score, grade=Grade(r.grade), hop=r.hop, query=r.query, url=r.url)


def _recall_by_hop(
    services: Services, question: str, records: list[EvidenceRecord], hops: int, gold: list[str], k: int
) -> list[float]:
    """Recall@k of the ranking the loop would have handed to synthesis had it stopped after each hop."""
    out: list[float] = []
    for h in range(1, hops + 1):
        upto = [r for r in records if r.hop <= h]
        chosen = services.reasoner.select(question, [_evidence(r) for r in upto], k,
                                          services.settings.limits.evidence_token_budget)
        ids = {e.id for e in chosen}
        by_id = {r.evidence_id: r for r in upto}
        out.append(
            round(
                recall(
                    _ranking([by_id[e.id] for e in chosen], [r for r in upto if r.evidence_id not in ids], k),
                    gold,
                ),
                4,
            )
        )
    return out


def _row(services: Services, q: dict[str, Any], inv_id: str, view: dict[str, Any], k: int) -> dict[str, Any]:
    from datetime import datetime

    from storage import repositories as repo
    from storage.repositories import event_view

    with services.session() as session:
        events = [event_view(e) for e in repo.list_events(session, investigation_id=inv_id)]
        records = repo.list_evidence(session, investigation_id=inv_id)
    loop = hop_stats(events)
    retrieved = retrieved_sources(services, inv_id, k)
    gold = list(q["gold"])
    created = datetime.fromisoformat(view["created_at"])
    finished = datetime.fromisoformat(view["finished_at"]) if view.get("finished_at") else created
    row = {
        "id": q["id"],
        "investigation_id": inv_id,
        "question": q["question"],
        "type": q.get("type"),
        "status": view["status"],
        "route": view["route"],
        "expected_route": q.get("expected_route"),
        "decision": decision_of(view["route"], view["status"]),
        "in_corpus": q["in_corpus"],
        "retrieved": retrieved,
        "gold": gold,
        "hops": view["hops"],
        "retrieval_calls": sum(h["retrievals"] for h in loop),
        "charged_calls": view["retrieval_calls"],
        "evidence_tokens": view["evidence_tokens"],
        "latency_ms": round((finished - created).total_seconds() * 1000, 1),
        "answer": view["answer"],
        "citations": [c["source_id"] for c in view.get("citations") or []],
        "stop_reason": view["stop_reason"],
        "loop": loop,
        "thrash_hops": sum(h["thrash"] for h in loop),
        "duplicate_rate": round(
            sum(h["already_seen"] for h in loop) / max(1, sum(h["fused"] for h in loop)), 4
        ),
        "recall": recall(retrieved, gold),
        "recall@5": recall(retrieved[:5], gold),
        "recall_pool": recall(list({r.source_id for r in records}), gold),
        "recall_by_hop": (
            _recall_by_hop(services, q["question"], records, int(view["hops"] or 0), gold, k)
            if gold and q["in_corpus"]
            else []
        ),
        "gold_answers": q.get("answers") or [],
    }
    row["answer_scores"] = answer_scores(view["answer"], row["gold_answers"]) if q["in_corpus"] else None
    # Audience and untrusted text: which cited documents are internal, and does the answer quote a flagged
    # one.
    by_id = {r.evidence_id: r for r in records}
    cited = [by_id[c["evidence_id"]] for c in view.get("citations") or [] if c.get("evidence_id") in by_id]
    row["audience"] = q.get("audience", "agent")
    row["internal_cited"] = sorted({r.source_id for r in cited if r.visibility == "internal"})
    row["injected_quoted"] = any(r.flagged for r in cited) or untrusted(view["answer"] or "")
    return row


def run_bench(
    settings: Settings,
    dataset_dir: Path,
    *,
    mode: str,
    k: int,
    out: Path,
    executor: str,
    limit: int | None,
    workers: int,
    concurrency: int,
    console: Console,
    decisions: bool = False,
    corpus_dir: Path | None = None,
    report: Path | None = None,
    baseline: Path | None = None,
    profile: Path | None = None,
    split: str | None = None,
    kb_dir: Path | None = None,
) -> dict[str, Any]:
    from cli.bench_profile import profiling
    from cli.commands import create_and_launch
    from investigation import compiled
    from storage import repositories as repo
    from tasks import inline

    if executor not in ("queue", "inline"):
        raise ValidationFailed("executor", "must be queue or inline")
    # Everything is queued at once, so a question may wait long before it runs: deadlines are generous.
    settings = settings.model_copy(update={"final_k": k, "deadline_seconds": 3600})
    bench = load_set(dataset_dir, decisions=decisions, corpus_dir=corpus_dir, limit=limit, split=split,
                     kb_dir=kb_dir)
    questions = bench.questions
    tenant_id = _bench_tenant(Services(settings), bench, console)
    with Services(settings).session() as session:
        tenant = repo.get_tenant(session, tenant_id=tenant_id)  # read once: every question is asked of it
        tenant_name = tenant.name
    stack = (processes.queue_stack(settings, workers=workers, concurrency=concurrency,
                                   env={"SLEUTH_FINAL_K": str(k), "SLEUTH_DEADLINE_SECONDS": "3600"})
             if executor == "queue" else processes.state_redis(settings))
    with stack as live, profiling(profile) as pool:
        services = Services(live, one_process=executor == "inline")
        if executor == "inline":  # as a worker process is at its start: model loaded, start-up heap frozen
            from workers.runtime import prepare_process

            prepare_process(services)
        started, cpu_started = time.perf_counter(), time.process_time()
        ids: list[str] = []
        with progress.bar(console, "investigations", len(questions)) as update:
            if executor == "queue":
                ids = [
                    create_and_launch(
                        services,
                        tenant_name,
                        q["question"],
                        mode,
                        audience=q.get("audience", "agent"),
                        tenant=tenant,
                    )
                    for q in questions
                ]
                views = []
                for i in ids:
                    views.append(wait_for(services, i, timeout=600))
                    update(len(views), len(ids))
            else:
                views = []
                for q in questions:
                    inv_id = create_and_launch(
                        services, tenant_name, q["question"], mode, audience=q.get("audience", "agent"),
                        launch=lambda i: inline.run(services, i, deliver=False, pool=pool), tenant=tenant,
                        in_process=True)
                    ids.append(inv_id)
                    with services.session() as session:
                        views.append(repo.investigation_view(
                            session, investigation=repo.get_investigation(session, investigation_id=inv_id)))
                    update(len(views), len(questions))
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started  # this process only (all its threads), not Redis or workers
        rows = [{**_row(services, q, inv_id, view, k), "mode": mode}
                for q, inv_id, view in zip(questions, ids, views, strict=True)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summary = {
        "dataset": bench.name,
        "split": split or "all",
        "mode": mode,
        "executor": executor,
        "k": k,
        **summarise(rows, k=k, max_hops=settings.limits.max_hops),
        "wall_seconds": round(wall, 2),
        "investigations_per_second": round(len(rows) / wall, 3) if wall else None,
        "cpu_seconds": round(cpu, 2),
        "cpu_ms_per_investigation": round(1000 * cpu / max(1, len(rows)), 1),
        "heuristics": compiled.status().reason,
    }  # this process's (investigation/compiled.py)
    print(json.dumps(summary, indent=2))
    from cli.bench_report import print_summary, write_report

    print_summary(summary, console)
    if report is not None:
        base_rows = _load_rows(baseline) if baseline else None
        write_report(report, summary, rows, baseline=base_rows)
        console.print(f"report written to {report}")
    return summary


def _load_rows(path: Path) -> list[dict[str, Any]]:
    return [row for _n, row in _read_jsonl(path)]
