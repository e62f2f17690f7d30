"""A document re-ingested as internal leaves customer answers at once, with nothing running: the in-process
`sleuth ask` starts an embedded Redis that keeps its sub-query cache between runs, and the ingest in between
(with no Redis up) still retires every entry built before it (the corpus version is the database's)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.cli import run_sleuth

DOC = {
    "id": "refund-window",
    "title": "Zephyrium refund window",
    "text": "Zephyrium orders can be refunded within 45 days of delivery. Refunds for Zephyrium go back to "
    "the card that paid, within five business days.",
    "url": "https://help.example.com/zephyrium-refunds",
}
QUESTION = "How long is the Zephyrium refund window?"


def sleuth(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    full_env.update({"SLEUTH_HOME": str(home), "SLEUTH_SUBQUERY_CACHE_TTL": "3600", **env})
    return run_sleuth(args, full_env)


def _ingest(home: Path, tmp_path: Path, visibility: str) -> None:
    kb = tmp_path / f"{visibility}.jsonl"
    kb.write_text(json.dumps({**DOC, "visibility": visibility}) + "\n", encoding="utf-8")
    done = sleuth(home, "ingest", str(kb), "--tenant", "acme", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["chunks_written"] >= 1


def _customer_sources(home: Path) -> list[str]:
    done = sleuth(home, "ask", QUESTION, "--tenant", "acme", "--audience", "customer", "--json")
    assert done.returncode == 0, done.stderr
    return [c["source_id"] for c in json.loads(done.stdout)["citations"]]


def test_a_document_re_ingested_as_internal_is_never_cited_to_a_customer_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    created = sleuth(home, "tenants", "create", "acme", "--json")
    assert created.returncode == 0, created.stderr
    _ingest(home, tmp_path, "public")
    assert _customer_sources(home) == [DOC["id"]]  # found, and cached under the corpus as it was
    _ingest(home, tmp_path, "internal")  # nothing is running: no Redis to tell
    assert not (home / "run" / "redis.sock").exists()
    assert DOC["id"] not in _customer_sources(home)
