"""Write docs/figures.md: the current evaluation and throughput figures, with the date, commit and machine.

    .venv/bin/python scripts/figures.py [--out docs/figures.md] [--limit N]      (or: make figures)

Every figure comes from a `sleuth bench` run started here, on a fresh SLEUTH_HOME per data set (BM25
statistics depend on everything a home holds) with the sub-query cache off, so repeated runs do not
flatter latency. --limit N runs N questions of each set (a quick check of the script, not figures).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SLEUTH = ROOT / ".venv" / "bin" / "sleuth"
INGESTED = re.compile(r"ingested (\d+) documents \((\d+) chunks\) in ([0-9.]+)s")


@dataclass(frozen=True)
class Run:
    """One `sleuth bench` invocation and the home it runs in."""

    home: str
    label: str
    args: tuple[str, ...]


BENCH = ("--k", "10")
RUNS = [
    # Each set's first run ingests it into a fresh home (cold: the embeddings are computed).
    Run("hotpotqa", "hotpotqa agentic inline",
        ("examples/bench/hotpotqa", "--mode", "agentic", *BENCH, "--executor", "inline")),
    Run("hotpotqa", "hotpotqa single-shot inline",
        ("examples/bench/hotpotqa", "--mode", "single-shot", *BENCH, "--executor", "inline")),
    Run("hotpotqa", "hotpotqa agentic queue c1",
        ("examples/bench/hotpotqa", "--mode", "agentic", *BENCH, "--executor", "queue", "--concurrency", "1")),
    Run("hotpotqa", "hotpotqa agentic queue c2",
        ("examples/bench/hotpotqa", "--mode", "agentic", *BENCH, "--executor", "queue", "--concurrency", "2")),
    Run("musique", "musique agentic inline",
        ("examples/bench/musique", "--mode", "agentic", *BENCH, "--executor", "inline")),
    Run("musique", "musique single-shot inline",
        ("examples/bench/musique", "--mode", "single-shot", *BENCH, "--executor", "inline")),
    Run("musique", "musique agentic queue c1",
        ("examples/bench/musique", "--mode", "agentic", *BENCH, "--executor", "queue", "--concurrency", "1")),
    Run("musique", "musique agentic queue c2",
        ("examples/bench/musique", "--mode", "agentic", *BENCH, "--executor", "queue", "--concurrency", "2")),
    Run("acme", "demo KB decisions inline", ("examples", "--decisions", "--executor", "inline")),
    Run("parcelo", "Parcelo KB decisions inline", ("examples/parcelo", "--decisions", "--executor", "inline")),
]


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{head} (with uncommitted changes)" if dirty else head


def bench(run: Run, homes: Path, outs: Path, limit: int | None) -> dict[str, Any]:
    env = {**os.environ, "SLEUTH_HOME": str(homes / run.home), "SLEUTH_SUBQUERY_CACHE_TTL": "0",
           "TERM": "dumb", "COLUMNS": "200"}
    args = [str(SLEUTH), "bench", *run.args, "--out", str(outs / (run.label.replace(" ", "-") + ".jsonl"))]
    if limit:
        args += ["--limit", str(limit)]
    print(f"=== {run.label} {datetime.now(UTC):%H:%M:%S}", flush=True)
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    text = done.stdout + done.stderr
    if done.returncode != 0 or "{\n" not in done.stdout:
        sys.exit(f"{run.label} failed ({done.returncode}):\n{text[-3000:]}")
    summary: dict[str, Any] = json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("{\n"):])[0]
    summary["command_seconds"] = round(time.perf_counter() - started, 1)
    if found := INGESTED.search(text):
        summary["ingest"] = {"documents": int(found[1]), "chunks": int(found[2]), "seconds": float(found[3])}
    print(f"    {summary['questions']} questions, {summary['investigations_per_second']}/s", flush=True)
    return summary


def f3(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def page(results: dict[str, dict[str, Any]], started: datetime, load: float, limit: int | None) -> str:
    lines = [
        "# Figures",
        "",
        "The current evaluation and throughput figures of the embedded setup (tantivy BM25, flat MiniLM vectors,",
        "heuristic reasoner). For anyone who wants today's numbers: this page is generated by `make figures`",
        "(`scripts/figures.py`); do not edit it by hand. How to measure and what the figures mean:",
        "[performance.md](performance.md), [evaluation.md](evaluation.md).",
        "",
        f"- **Date**: {started:%Y-%m-%d %H:%M} UTC",
        f"- **Commit**: {commit()}",
        f"- **Machine**: {machine()}; load average {load:.2f} at the start",
        f"- **Heuristics**: {next(iter(results.values())).get('heuristics', '?')}",
    ]
    if limit:
        lines.append(f"- **Only the first {limit} questions of each set** (`--limit`): not figures to quote")
    lines += [
        "",
        "Every run uses a fresh `SLEUTH_HOME` per data set and `SLEUTH_SUBQUERY_CACHE_TTL=0`; the commands are",
        "`sleuth bench DATASET --mode MODE --k 10 --executor inline|queue [--concurrency N]` (support sets:",
        "`sleuth bench examples --decisions --executor inline`, likewise `examples/parcelo`).",
        "",
        "## Retrieval (100 questions per sample)",
        "",
        "| data | mode | recall@5 | recall@10 | all gold@10 | retrieval calls | evidence tokens | max hops |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ds, name in (("hotpotqa", "HotpotQA"), ("musique", "MuSiQue")):
        for mode in ("single-shot", "agentic"):
            s = results[f"{ds} {mode} inline"]
            lines.append(f"| {name} | {mode} | {f3(s['recall@5'])} | {f3(s['recall@10'])} | {f3(s['all_gold@10'])} "
                         f"| {s['avg_retrieval_calls']:.1f} | {s['avg_evidence_tokens']:,.0f} | {s['max_hops']} |")
    lines += [
        "",
        "## Answers and decisions (agentic, inline)",
        "",
        ("| set | questions | route accuracy | answer contains gold | answer first | out-of-corpus refused "
         "| false refusals | internal leaks (customer) | answers quoting injected text |"),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, name in (("hotpotqa agentic inline", "HotpotQA sample"), ("musique agentic inline", "MuSiQue sample"),
                      ("demo KB decisions inline", "demo KB (`examples/decisions.jsonl`)"),
                      ("Parcelo KB decisions inline", "Parcelo KB (`examples/parcelo`)")):
        s = results[key]
        ref, ans, aud = s["refusal"], s["answers"], s["audience"]
        refused = (f"{f3(ref['refusal_rate'])} of {ref['out_of_corpus_questions']}"
                   if ref["out_of_corpus_questions"] else "–")
        leaks = f"{aud['internal_leaks']} of {aud['customer_questions']}" if aud["customer_questions"] else "–"
        lines.append(f"| {name} | {s['questions']} | {f3(s['decisions']['route_accuracy'])} | {f3(ans['contains'])} "
                     f"| {f3(ans['answer_first'])} | {refused} | {f3(ref['false_refusal_rate'])} | {leaks} "
                     f"| {aud['injected_quoted']} |")
    lines += [
        "",
        "## Throughput (agentic, 100 investigations, one client)",
        "",
        "Inline runs the same step functions in the bench's process; queue starts an embedded Redis and one",
        "Celery worker with 1 or 2 pool processes (its start-up is not in the wall time). CPU is the bench",
        "process's, meaningful for inline only.",
        "",
        ("| data | inline | inline CPU per investigation | queue, 1 process | queue, 2 processes "
         "| mean latency inline / queue (2) |"),
        "|---|---|---|---|---|---|",
    ]
    for ds, name in (("hotpotqa", "HotpotQA"), ("musique", "MuSiQue")):
        inline, q1, q2 = (results[f"{ds} agentic {x}"] for x in ("inline", "queue c1", "queue c2"))

        def rate(s: dict[str, Any]) -> str:
            return f"{s['investigations_per_second']:.1f}/s ({s['wall_seconds']:.1f} s)"

        lines.append(f"| {name} | {rate(inline)} | {inline['cpu_ms_per_investigation']:.0f} ms | {rate(q1)} "
                     f"| {rate(q2)} | {inline['avg_latency_ms']:.0f} / {q2['avg_latency_ms']:.0f} ms |")
    support = [(name, results[key]) for key, name in (("demo KB decisions inline", "demo KB"),
                                                      ("Parcelo KB decisions inline", "Parcelo KB"))]
    lines += ["", "Support sets inline: " + "; ".join(
        f"{name} {s['investigations_per_second']:.1f}/s ({s['questions']} questions, "
        f"{s['cpu_ms_per_investigation']:.0f} ms CPU each)" for name, s in support) + "."]
    ingests = [(key.split()[0], s["ingest"]) for key, s in results.items() if "ingest" in s]
    if ingests:
        lines += ["", "## Ingest (cold: every embedding computed)", "",
                  "| data | documents | chunks | seconds | chunks/s |", "|---|---|---|---|---|"]
        for name, i in ingests:
            lines.append(f"| {name} | {i['documents']:,} | {i['chunks']:,} | {i['seconds']:.1f} "
                         f"| {i['chunks'] / max(i['seconds'], 0.01):.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures.md")
    parser.add_argument("--limit", type=int, default=None)
    opts = parser.parse_args()
    started, load = datetime.now(UTC), os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="sleuth-figures-"))
    try:
        homes, outs = work / "homes", work / "out"
        outs.mkdir(parents=True)
        results = {run.label: bench(run, homes, outs, opts.limit) for run in RUNS}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    opts.out.write_text(page(results, started, load, opts.limit), encoding="utf-8")
    print(f"written {opts.out}")


if __name__ == "__main__":
    main()
