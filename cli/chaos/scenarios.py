"""The chaos scenarios run on the shared stack: processes and services killed (workers, Redis), the
webhook receiver down; the registry of every shared-stack scenario and the runner that times each."""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable

import httpx
import psutil

from cli.chaos.harness import Harness
from cli.chaos.load import burst, schemathesis_run
from cli.chaos.probes import bad_documents, isolation
from cli.chaos.result import Result, _q


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
        # A fresh interpreter's argv, a forked child's title (cli/forking.py), or Celery's own title.
        if any(mark in cmd for mark in ("cli.main beat", "sleuth beat", " -B", "celery beat")):
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
