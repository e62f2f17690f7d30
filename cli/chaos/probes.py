"""Scenarios of hostile data: one tenant's documents probed for by another (API, console, log), and
bad documents at ingest."""

from __future__ import annotations

import subprocess
import sys
import uuid

import httpx

from cli.chaos.harness import Harness
from cli.chaos.result import Result


def isolation(h: Harness) -> Result:
    """Tenant `small` never sees tenant `big`'s documents, investigations, traces or events; the console's
    links, forms and sessions hold (`cli.chaos.console_probes`)."""
    from adapters.search.ingest import SourceDocument, ingest
    from app.corpus import corpus_changed
    from bootstrap import Services
    from cli.chaos.console_probes import console_probes

    canary = f"ZEBRACANARY{uuid.uuid4().hex[:8].upper()}"
    secret = f"unlockcode{uuid.uuid4().hex[:10]}"  # only in the document, never in a question
    services = Services(h.settings(redis_url=str(h.run_info()["redis_url"])))
    ingest(
        [
            SourceDocument(
                id="canary",
                title=f"{canary} policy",
                text=f"The {canary} procedure is secret to tenant big: the code {secret} unlocks it.",
            )
        ],
        tenant=h.tenants["big"].id,
        backends=list(services.backends.values()),
    )
    corpus_changed(services, tenant_id=h.tenants["big"].id)
    mine = h.submit("big", f"What is the {canary} procedure?")
    theirs = h.submit("small", f"What is the {canary} procedure?")
    views = {**h.wait_all("big", [mine], 120), **h.wait_all("small", [theirs], 120)}
    leaks = []
    seen = views.get(theirs, {})
    if secret in str(seen):
        leaks.append("retrieval/answer")
    auth = {"Authorization": f"Bearer {h.tenants['small'].key}"}
    for path in (f"/v1/investigations/{mine}", f"/v1/investigations/{mine}/trace",
                 f"/v1/investigations/{mine}/events", f"/trace/{mine}"):
        if httpx.get(h.base + path, headers=auth, timeout=30).status_code not in (401, 403, 404):
            leaks.append(path)
    log = h.log_path.read_text(errors="replace") if h.log_path else ""
    if any(t.key in log for t in h.tenants.values()):
        leaks.append("API key in the log")
    own = views.get(mine, {})
    found_own = secret in str(own)
    console_run, console_failed = console_probes(h, mine)  # links, CSRF, sign-out
    leaks += console_failed
    figures = {"probes": 6 + console_run, "leaks": len(leaks), "own tenant finds it": found_own}
    return Result("tenant-isolation", not leaks and found_own, figures, note=", ".join(leaks))


def bad_documents(h: Harness) -> Result:
    """Binary, malformed and duplicate documents at ingest: each named, the index unchanged."""
    from bootstrap import Services

    folder = h.work / "bad-docs"
    folder.mkdir(exist_ok=True)
    (folder / "binary.md").write_bytes(bytes(range(256)) * 40)
    (folder / "broken.jsonl").write_text(
        '{"id": "x1", "title": "ok", "text": "fine"}\n{"id": "x2", "title"\n'
    )
    (folder / "dups.jsonl").write_text('{"id": "d", "title": "a", "text": "one"}\n'
                                       '{"id": "d", "title": "b", "text": "two"}\n')
    services = Services(h.settings())
    backends = list(services.backends.values())
    before = [b.count(h.tenants["small"].id) for b in backends]
    run = subprocess.run([sys.executable, "-m", "cli.main", "ingest", str(folder), "--tenant", "small"],
                         env=h.env(), capture_output=True, text=True, timeout=300, check=False)
    after = [b.count(h.tenants["small"].id) for b in backends]
    named = [f for f in ("binary.md", "broken.jsonl", "dups.jsonl") if f in run.stderr]
    figures = {"bad files": 3, "named in the error": len(named), "exit code": run.returncode,
               "index unchanged": before == after}
    return Result("bad-documents", run.returncode != 0 and before == after and len(named) == 3, figures,
                  note=run.stderr.strip().splitlines()[-1][:200] if run.stderr.strip() else "")
