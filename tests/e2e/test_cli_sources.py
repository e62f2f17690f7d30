"""`sleuth sources` as an operator uses it: add a folder source, sync it (no broker running: in this process),
list the last sync, see a removed file leave the index, remove the source; bad input names the flag."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.cli import run_sleuth


def sleuth(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env["SLEUTH_HOME"] = str(home)
    return run_sleuth(args, env, timeout=300)


def test_sources_add_sync_list_remove(tmp_path: Path) -> None:
    home, docs = tmp_path / "home", tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nThe alpha gateway restarts nightly.", encoding="utf-8")
    (docs / "b.md").write_text("# Beta\n\nThe beta gateway never restarts.", encoding="utf-8")
    assert sleuth(home, "tenants", "create", "acme").returncode == 0
    bad = sleuth(home, "sources", "add", "kb", "--tenant", "acme", "--type", "dropbox")
    assert bad.returncode != 0 and "type" in bad.stderr and "dropbox" in bad.stderr
    added = sleuth(home, "sources", "add", "kb", "--tenant", "acme", "--type", "folder", "--path", str(docs),
                   "--every", "1h", "--json")
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["every_seconds"] == 3600
    synced = sleuth(home, "sources", "sync", "kb", "--tenant", "acme", "--json")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["last_stats"]["added"] == 2
    (docs / "b.md").unlink()
    synced = sleuth(home, "sources", "sync", "kb", "--tenant", "acme", "--full", "--json")
    assert json.loads(synced.stdout)["last_stats"]["deleted"] == 1
    listed = sleuth(home, "sources", "list", "--tenant", "acme")
    assert "kb  folder  every 60m  1 items" in listed.stdout and "1 deleted" in listed.stdout
    removed = sleuth(home, "sources", "remove", "kb", "--tenant", "acme", "--json")
    assert json.loads(removed.stdout) == {"removed": "kb", "documents": 1}
    assert "no sources" in sleuth(home, "sources", "list", "--tenant", "acme").stdout
