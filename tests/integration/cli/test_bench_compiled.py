"""The compiled heuristics (mypyc, investigation/compiled.py) change nothing a bench scores: a decision set
over every route run on the Python source and on the compiled build, each in its own `sleuth bench` process
(the choice is made at import), gives identical rows. In CI the build must be there and in use: the suite then
runs the
code the demo and the workers run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from investigation import compiled
from tests.integration.cli.test_bench_equality import _scored, _subset

ROOT = Path(__file__).resolve().parents[3]
SLEUTH = Path(sys.executable).with_name("sleuth")


def test_in_ci_the_suite_runs_the_compiled_heuristics() -> None:
    if os.environ.get("CI") != "true":
        pytest.skip("outside CI a checkout may run the Python source (no compiler, or sources edited since "
                    "`make compile`)")
    import heuristic.synthesis
    import investigation.text

    assert compiled.status().active, compiled.status().reason
    for module in (heuristic.synthesis, investigation.text):
        assert Path(str(module.__file__)).is_relative_to(compiled.BUILD), module.__file__


def _bench(dataset: Path, home: Path, out: Path, env: dict[str, str]) -> tuple[list[dict[str, Any]], str]:
    done = subprocess.run(
        [str(SLEUTH), "bench", str(dataset), "--decisions", "--executor", "inline", "--out", str(out)],
        cwd=ROOT,
        env={**env, "SLEUTH_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], done.stdout


def test_bench_rows_are_identical_on_the_compiled_build_and_the_python_source(
        tmp_path: Path, redis_url: str, redis_prefix: str, embeddings_dir: Path) -> None:
    if not compiled.status().active:
        pytest.skip(f"no compiled build in use: {compiled.status().reason}")
    dataset, asked = _subset(tmp_path, every=5)  # 18 questions, every route
    env = {**os.environ, "SLEUTH_REDIS_URL": redis_url, "SLEUTH_REDIS_PREFIX": redis_prefix,
           "SLEUTH_SUBQUERY_CACHE_TTL": "0", "SLEUTH_EMBEDDINGS_DIR": str(embeddings_dir)}
    env.pop("SLEUTH_COMPILED", None)
    home = tmp_path / "home"  # one home, as test_bench_equality does: the second run finds the KB ingested
    source, said_source = _bench(
        dataset, home, tmp_path / "source.jsonl", {**env, "SLEUTH_COMPILED": "false"}
    )
    built, said_built = _bench(dataset, home, tmp_path / "compiled.jsonl", env)

    assert '"heuristics": "Python source (SLEUTH_COMPILED=false)"' in said_source
    assert '"heuristics": "compiled (mypyc' in said_built
    assert len(source) == asked and any(r["answer"] for r in source) and any(r["retrieved"] for r in source)
    assert _scored(built) == _scored(source)
