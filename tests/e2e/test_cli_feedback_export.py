"""`sleuth feedback export`: rated investigations (run through the real loop over a small corpus) become a
labelled decision set — the correction or the helpful answer as the expected answer, the cited sources as
gold, a right refusal as out_of_corpus — which `sleuth bench --decisions` reads and runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli.bench import load_set
from storage import repositories as repo
from tasks import inline
from tests.support.cli import run_sleuth
from tests.support.stack import CORPUS, Stack, build_stack


def _sleuth(stack: Stack, *args: str, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    return run_sleuth(args, stack.env(), timeout=timeout)


def _rated(stack: Stack, question: str, rating: str, correction: str | None = None) -> str:
    inv_id = stack.asked(question)
    inline.run(stack.services, inv_id, deliver=False)
    with stack.services.session() as session:
        repo.record_feedback(
            session,
            tenant_id=stack.tenant_id,
            investigation_id=inv_id,
            rater="lead@acme.test",
            rating=rating,
            source="api",
            correct_answer=correction,
        )
    return inv_id


def test_export_is_a_decision_set_that_bench_runs(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    stack = build_stack(tmp_path / "home", redis_url, redis_prefix)
    helpful = _rated(stack, "Which plan includes SCIM provisioning?", "helpful")
    corrected = _rated(
        stack, "What does ERR_4021 mean?", "wrong", "The API key was rotated; create a new one."
    )
    refusal = _rated(stack, "What is the recipe for a chocolate cake?", "helpful")
    _rated(stack, "How much does the Team plan cost?", "wrong")  # nothing to compare with: left out
    with stack.services.session() as session:
        invs = {i: repo.get_investigation(session, investigation_id=i) for i in (helpful, corrected, refusal)}
    assert invs[helpful].status == "answered" and invs[helpful].citations
    assert invs[refusal].status == "refused"

    run = _sleuth(stack, "feedback", "export", "--tenant", stack.tenant_name, "--since", "30d")
    assert run.returncode == 0, run.stderr
    assert "3 labelled questions; left out: 1 rated wrong without a correction" in run.stderr
    rows = {r["id"]: r for r in map(json.loads, run.stdout.splitlines())}
    assert list(rows) == [helpful, corrected, refusal]
    cited = list(dict.fromkeys(c["source_id"] for c in invs[helpful].citations))
    assert rows[helpful]["route"] == invs[helpful].route and rows[helpful]["gold_source_ids"] == cited
    assert rows[helpful]["answer"] and "[1]" not in rows[helpful]["answer"]
    assert rows[corrected]["answer"] == "The API key was rotated; create a new one."
    assert rows[corrected]["gold_source_ids"] == [] and rows[corrected]["corrected"] is True
    assert (rows[refusal]["route"], rows[refusal]["answer"], rows[refusal]["gold_source_ids"]) == (
        "out_of_corpus", None, [])
    assert {r["audience"] for r in rows.values()} == {"agent"}

    bench_dir = tmp_path / "labelled"
    bench_dir.mkdir()
    (bench_dir / "decisions.jsonl").write_text(run.stdout, encoding="utf-8")
    (bench_dir / "passages.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS), encoding="utf-8")
    loaded = load_set(bench_dir / "decisions.jsonl", decisions=True, corpus_dir=None, limit=None)
    assert [q["id"] for q in loaded.questions] == [helpful, corrected, refusal]
    assert loaded.questions[0]["gold"] == cited and loaded.questions[2]["expected_route"] == "out_of_corpus"

    out = tmp_path / "bench.jsonl"
    bench = _sleuth(stack, "bench", str(bench_dir), "--decisions", "--executor", "inline", "--out", str(out),
                    timeout=600)
    assert bench.returncode == 0, bench.stderr[-2000:]
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in results] == [helpful, corrected, refusal]
    assert results[0]["recall"] == 1.0  # the same question finds the sources it cited
