"""The chaos scenarios: each drives the running stack, measures, and says whether the promise held."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil

from cli.chaos.harness import DepthSampler, Harness

QUESTIONS = [
    "What does error ERR_4021 mean?", "How do I reset my password?", "Which plan includes SSO?",
    "How long is a password reset link valid?", "How do I export my data?", "What does ERR_4030 mean?",
    "How do I set up two-factor authentication?", "Where can I download invoices?",
]


@dataclass
class Result:
    name: str
    passed: bool | None  # None: not run
    figures: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    charts: dict[str, Any] = field(default_factory=dict)


def _q(i: int) -> str:
    return f"{QUESTIONS[i % len(QUESTIONS)]} (case {i})"


def _latency(view: dict[str, Any]) -> float | None:
    try:
        return (datetime.fromisoformat(view["finished_at"]) - datetime.fromisoformat(view["created_at"])
                ).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))], 2)


def kill_workers(h: Harness) -> Result:
    """SIGKILL pool children and worker main processes repeatedly during a run."""
    n = h.scale.kill_n
    ids = [h.submit("big", _q(i), callback=True) for i in range(n)]
    kills: list[str] = []
    recoveries: list[float] = []
    rng = random.Random(7)
    for round_ in range(h.scale.kill_rounds):
        time.sleep(1.5)
        name = f"worker{rng.randrange(h.scale.workers)}"
        main = h.child_pid(name)
        if main is None:
            continue
        children = psutil.Process(main).children() if psutil.pid_exists(main) else []
        if round_ % 2 == 0 and children:
            os.kill(children[0].pid, signal.SIGKILL)
            kills.append("pool child")
            continue
        os.kill(main, signal.SIGKILL)
        kills.append("worker main")
        killed_at = time.monotonic()
        while time.monotonic() - killed_at < 60:
            pid = h.child_pid(name)
            if pid is not None and pid != main and h.workers_ready():
                recoveries.append(round(time.monotonic() - killed_at, 1))
                break
            time.sleep(0.2)
    done = h.wait_all("big", ids, timeout=240 if h.scale.name == "small" else 1200)
    beats = _beat_processes(h)
    h.wait_deliveries(
        set().union(*[{d["id"] for d in v.get("deliveries", [])} for v in done.values()]) if done else set(),
        timeout=150 if h.scale.name == "small" else 240,
    )
    accepted = h.receiver.accepted()
    mine = {d["id"] for v in done.values() for d in v.get("deliveries", [])}
    dup = sum(1 for i in mine if accepted.get(i, 0) > 1)
    figures = {"investigations": n, "terminal": len(done), "lost": n - len(done),
               "failed": sum(v["status"] == "failed" for v in done.values()),
               "delivered": sum(1 for i in mine if accepted.get(i)), "duplicate deliveries": dup,
               "kills": f"{kills.count('worker main')} main / {kills.count('pool child')} pool",
               "recovery s (max)": max(recoveries) if recoveries else "-", "beat processes": beats}
    ok = len(done) == n and dup == 0 and figures["delivered"] == len(mine) and beats == 1
    return Result("kill-workers", ok, figures)


def _beat_processes(h: Harness) -> int:
    """Celery beats of this stack (there must be exactly one, whatever was killed and restarted)."""
    if h.proc is None:
        return 0
    count = 0
    for proc in psutil.Process(h.proc.pid).children(recursive=True):
        try:
            cmd = " ".join(proc.cmdline())
        except psutil.Error:
            continue
        if "cli.main beat" in cmd or " -B" in cmd or "celery beat" in cmd:
            count += 1
    return count


def redis_restart(h: Harness) -> Result:
    """The embedded Redis is SIGKILLed mid-run; the supervisor restarts it (AOF); work resumes."""
    if h.child_pid("redis") is None:
        return Result("redis-restart", None, note="SLEUTH_REDIS_URL is set: no embedded Redis to kill")

    def kill() -> float | None:
        pid = h.child_pid("redis")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        while time.monotonic() - killed < 60:
            new = h.child_pid("redis")
            if new is not None and new != pid:
                return round(time.monotonic() - killed, 1)
            time.sleep(0.2)
        return None

    return redis_killed(h, "redis-restart", kill)


def redis_killed(h: Harness, name: str, kill: Callable[[], float | None]) -> Result:
    """Investigations in flight while `kill` SIGKILLs Redis and waits until it is back (its seconds, or
    None): none stuck past its deadline, failures with a reason, nothing delivered twice."""
    n = h.scale.redis_n
    ids = [h.submit("big", _q(i), callback=True) for i in range(n)]
    time.sleep(1.0)
    back = kill()
    deadline = int(h.env()["SLEUTH_DEADLINE_SECONDS"])
    done = h.wait_all("big", ids, timeout=deadline + 60)
    mine = {d["id"] for v in done.values() for d in v.get("deliveries", [])}
    h.wait_deliveries(mine, timeout=60)
    accepted = h.receiver.accepted()
    dup = sum(1 for i in mine if accepted.get(i, 0) > 1)
    stuck = n - len(done)
    failed = [v for v in done.values() if v["status"] == "failed"]
    figures = {
        "investigations": n,
        "terminal": len(done),
        "stuck past deadline": stuck,
        "failed (with reason)": f"{len(failed)} "
                                f"({', '.join(sorted({str(v.get('stop_reason')) for v in failed})) or '-'})",
        "duplicate deliveries": dup,
        "redis back after s": back if back is not None else "never",
    }
    return Result(name, stuck == 0 and dup == 0 and all(v.get("stop_reason") for v in failed), figures)


def webhook_down(h: Harness) -> Result:
    """The receiver answers 503 for a while, then recovers: each delivered exactly once."""
    n = h.scale.webhook_n
    h.receiver.down = True
    ids = [h.submit("small", _q(i), callback=True) for i in range(n)]
    time.sleep(h.scale.webhook_down_s)
    attempts_while_down = h.receiver.attempts()
    h.receiver.down = False
    done = h.wait_all("small", ids, timeout=120)
    mine = {d["id"] for v in done.values() for d in v.get("deliveries", [])}
    h.wait_deliveries(mine, timeout=60)
    # Deliveries that used up their attempts during the outage are `dead`: the operator redelivers them.
    auth = {"Authorization": f"Bearer {h.tenants['small'].key}"}
    dead = [
        i
        for i in mine
        if i not in h.receiver.accepted()
        and httpx.get(f"{h.base}/v1/deliveries/{i}", headers=auth, timeout=30).json().get("status") == "dead"
    ]
    redelivered = sum(
        httpx.post(f"{h.base}/v1/deliveries/{i}/redeliver", headers=auth, timeout=30).status_code < 300
        for i in dead
    )
    h.wait_deliveries(mine, timeout=120)
    accepted = h.receiver.accepted()
    delivered = sum(1 for i in mine if accepted.get(i))
    dup = sum(1 for i in mine if accepted.get(i, 0) > 1)
    figures = {"investigations": n, "down for s": h.scale.webhook_down_s,
               "attempts while down": attempts_while_down, "dead after last attempt": len(dead),
               "redelivered": redelivered, "delivered once": delivered - dup, "duplicates": dup}
    return Result("webhook-down", delivered == len(mine) == n and dup == 0, figures)


def burst(h: Harness) -> Result:
    """`big` submits a burst while `small` keeps asking: small's p95 within 2x of its unloaded p95."""
    warm = h.submit("small", _q(99))  # a first question loads models in every process: not a figure
    h.wait_all("small", [warm], timeout=120)
    unloaded = []
    for i in range(h.scale.burst_small):
        inv = h.submit("small", _q(100 + i))
        view = h.wait_all("small", [inv], timeout=120).get(inv)
        if view and (seconds := _latency(view)) is not None:
            unloaded.append(seconds)
    with DepthSampler(h) as sampler, ThreadPoolExecutor(max_workers=8) as pool, httpx.Client(timeout=30) as c:
        big_ids = list(pool.map(lambda i: h.submit("big", _q(200 + i), client=c), range(h.scale.burst_big)))
        # Then `small` asks as it did unloaded: one question, its answer, the next (like for like: its own
        # questions never queue behind each other, so the ratio measures what the burst does to it).
        small_ids, small_done = [], {}
        for i in range(h.scale.burst_small):
            small_ids.append(h.submit("small", _q(300 + i), client=c))
            small_done.update(h.wait_all("small", small_ids[-1:], timeout=300))
        big_running = sum(1 for v in big_done_so_far(h, big_ids, c) if v is None)
        big_done = h.wait_all("big", big_ids, timeout=1800)
    held_peak = max((held for _, _, held in sampler.held), default=0)
    parked_peak = max((n for _, name, n in sampler.parked if name == "big"), default=0)
    parked_small = max((n for _, name, n in sampler.parked if name == "small"), default=0)
    lat: dict[str, list[float]] = {
        "big": [b for v in big_done.values() if (b := _latency(v)) is not None],
        "small": [s for v in small_done.values() if (s := _latency(v)) is not None]}
    base_p95 = _pct(unloaded, 95)
    figures = {"burst (big)": h.scale.burst_big, "small during burst": h.scale.burst_small,
               "big not finished when small was done": big_running,
               "completed": f"{len(big_done) + len(small_done)}/{len(big_ids) + len(small_ids)}",
               "small unloaded p95 s": base_p95, "big held back (peak)": held_peak,
               "big steps parked (peak)": parked_peak, "small steps parked (peak)": parked_small}
    for tenant, values in lat.items():
        figures[f"{tenant} p50/p95/p99 s"] = f"{_pct(values, 50)}/{_pct(values, 95)}/{_pct(values, 99)}"
    ok = (len(big_done) == len(big_ids) and len(small_done) == len(small_ids)
          and _pct(lat["small"], 95) <= 2 * max(base_p95, 1.0))
    parked = [(t, n) for t, name, n in sampler.parked if name == "big"]
    series = {"small (unloaded)": unloaded, "small (during the burst)": lat["small"], "big": lat["big"]}
    return Result("burst-fairness", ok, figures, charts={"latency": series, "depth": sampler.samples,
                                                         "parked": parked})


def big_done_so_far(h: Harness, ids: list[str], client: httpx.Client) -> list[dict[str, Any] | None]:
    """Each of `ids` viewed once: its view when terminal, else None (the burst still running?)."""
    views = [h.view("big", i, client) for i in ids]
    return [v if v is not None and v["status"] in ("answered", "refused", "failed") else None for v in views]


def schemathesis_run(h: Harness) -> Result:
    """schemathesis against the live API: 0 server errors, 0 undocumented responses."""
    checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
    binary = Path(sys.executable).parent / "schemathesis"
    if not binary.exists():
        return Result("schemathesis", None, note="schemathesis is not installed (dev extra)")
    run = subprocess.run([str(binary), "run", f"{h.base}/openapi.json", "-H",
                          f"Authorization: Bearer {h.tenants['small'].key}", "--checks", checks,
                          "--phases", h.scale.st_phases, "-n", str(h.scale.st_examples), "--seed", "1"],
                         capture_output=True, text=True, timeout=1800, check=False)
    summary = run.stdout.split("SUMMARY")[-1]
    generated = re.search(r"(\d+) generated", summary)
    failures = re.findall(r"❌ (ST\d+ [^:]+): (\d+)", summary)
    figures = {"test cases": int(generated.group(1)) if generated else "?",
               "server errors": sum(int(c) for n, c in failures if "Server error" in n),
               "undocumented responses": sum(int(c) for n, c in failures if "Undocumented" in n),
               "other failures": sum(int(c) for n, c in failures if "Server error" not in n
                                     and "Undocumented" not in n)}
    return Result("schemathesis", run.returncode == 0, figures)


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


SCENARIOS: dict[str, Callable[[Harness], Result]] = {
    "kill-workers": kill_workers,
    "redis-restart": redis_restart,
    "webhook-down": webhook_down,
    "burst-fairness": burst,
    "schemathesis": schemathesis_run,
    "tenant-isolation": isolation,
    "bad-documents": bad_documents,
}


def run_one(name: str, h: Harness, scenario: Callable[[Harness], Result] | None = None) -> Result:
    started = time.monotonic()
    try:
        result = (scenario or SCENARIOS[name])(h)
    except Exception as exc:  # noqa: BLE001 - a broken scenario is a failed row, the others still run
        result = Result(name, False, note=f"{type(exc).__name__}: {exc}"[:300])
    result.figures["seconds"] = round(time.monotonic() - started, 1)
    return result
