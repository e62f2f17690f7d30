"""`sleuth chaos --scenario partition`: investigations with webhook callbacks run on two worker hosts while
one host's link is cut for longer than the Redis broker's visibility timeout and restored, then every packet
from the workers to Redis is held 50 ms ± 20 ms. Promise: nothing lost, no investigation delivered twice."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from datetime import datetime
from typing import Any

from cli.chaos.netns import unavailable
from cli.chaos.partition_stack import WORKERS, PartitionHarness
from cli.chaos.result import Result, _latency, _pct, _q

CUT = WORKERS[1]
PHASES = ("before", "cut", "after", "delayed")
FINAL = ("SUCCESS", "FAILURE")


def not_permitted() -> str | None:
    """Why the scenario cannot run on this machine (None: it can)."""
    return unavailable()


def _submit_paced(h: PartitionHarness, count: int, seconds: float, phase: str,
                  submitted: list[tuple[str, str]], start: int) -> None:
    """`count` investigations spread evenly over `seconds` (the phase lasts that long whatever intake
    takes)."""
    began = time.monotonic()
    for i in range(count):
        submitted.append((h.submit("big", _q(start + i), callback=True), phase))
        time.sleep(max(0.0, began + (i + 1) * seconds / max(count, 1) - time.monotonic()))
    time.sleep(max(0.0, began + seconds - time.monotonic()))


def _watch_rejoin(h: PartitionHarness, restored: float, out: dict[str, float]) -> None:
    """Seconds from the restore until the cut worker answers a ping again."""
    node = f"sleuth{WORKERS.index(CUT)}@"
    while time.monotonic() - restored < 600:
        try:
            if any(name.startswith(node) for name in h.nodes(timeout=1.0)):
                out["rejoined"] = round(time.monotonic() - restored, 1)
                return
        except Exception:  # noqa: BLE001, S110 - a probe that fails is asked again
            pass
        time.sleep(0.5)


def _completed(h: PartitionHarness, cut: float, restored: float) -> dict[str, list[str]]:
    """Task id → `host:step@when` of each run that finished it (a retry is not a finish), from the step line
    each task run logs; `when` is before the cut, during it, or after the restore."""
    runs: dict[str, list[str]] = {}
    for host in WORKERS:
        for line in (h.work / f"{host}.log").read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not (isinstance(record, dict) and record.get("task_id") and record.get("state") in FINAL):
                continue
            at = datetime.fromisoformat(str(record["ts"])).timestamp()
            when = "before" if at < cut else ("during" if at < restored else "after")
            step = str(record.get("msg", "")).split()[0]
            runs.setdefault(str(record["task_id"]), []).append(f"{host}:{step}@{when}")
    return runs


def _cut_when_busy(h: PartitionHarness, start: int, submitted: list[tuple[str, str]], most: int) -> list[str]:
    """Submit a handful at once with the receiver slow to answer, and cut the link while the worker to be cut
    is delivering one of them: its answer is lost with the link, so the worker holds that task unacknowledged
    (with whatever else it holds) and only the visibility timeout can give it to the other worker. While the
    other worker took every delivery so far, a few more are submitted (at most `most` in all)."""
    from workers.app import create_celery

    node = f"sleuth{WORKERS.index(CUT)}@"
    h.receiver.hold_s = 3.0
    batch = min(6, most)
    for i in range(batch):
        submitted.append((h.submit("big", _q(start + i), callback=True), "cut"))
    sent = batch
    app = create_celery(h.settings(redis_url=h.redis_direct))
    held: list[str] = []
    try:
        began = time.monotonic()
        more_at = began + 15
        while time.monotonic() < began + 90:
            inspect = app.control.inspect(timeout=1.0)
            active, reserved = inspect.active() or {}, inspect.reserved() or {}
            mine = [t for k, v in [*active.items(), *reserved.items()] if k.startswith(node) for t in v]
            held = [t["id"] for t in mine]
            if any(t.get("name") == "sleuth.deliver" for t in mine):
                break
            if time.monotonic() >= more_at and sent < most:
                extra = min(3, most - sent)
                for i in range(extra):
                    submitted.append((h.submit("big", _q(start + sent + i), callback=True), "cut"))
                sent += extra
                more_at = time.monotonic() + 15
    finally:
        app.close()
    h.topo.cut(CUT)
    h.receiver.hold_s = 0.0
    return held


def _finished(view: dict[str, Any]) -> float | None:
    try:
        return datetime.fromisoformat(view["finished_at"]).timestamp()
    except (KeyError, TypeError, ValueError):
        return None


def partition(h: PartitionHarness) -> Result:
    plan = h.plan
    lengths = (plan.before_s, plan.cut_s, plan.after_s, plan.delayed_s)
    counts = [round(plan.n * s / sum(lengths)) for s in lengths]
    counts[-1] = plan.n - sum(counts[:-1])
    submitted: list[tuple[str, str]] = []
    rejoin: dict[str, float] = {}
    _submit_paced(h, counts[0], plan.before_s, "before", submitted, 0)
    held = _cut_when_busy(h, len(submitted), submitted, most=counts[1])
    cut_wall = time.time()
    at_cut = sum(1 for _, phase in submitted if phase == "cut")
    _submit_paced(h, max(0, counts[1] - at_cut), plan.cut_s, "cut", submitted, len(submitted))
    h.topo.restore(CUT)
    restored, restored_wall = time.monotonic(), time.time()
    watcher = threading.Thread(target=_watch_rejoin, args=(h, restored, rejoin), daemon=True)
    watcher.start()
    _submit_paced(h, counts[2], plan.after_s, "after", submitted, len(submitted))
    assert h.worker_redis is not None
    h.worker_redis.delay_ms = plan.delay_ms
    _submit_paced(h, counts[3], plan.delayed_s, "delayed", submitted, len(submitted))
    ids = [i for i, _ in submitted]
    done = h.wait_all("big", ids, timeout=plan.deadline_s + 120)
    h.worker_redis.delay_ms = None
    watcher.join(60)  # returns as soon as the cut worker answers (within ~2 health checks of the restore)
    time.sleep(5)  # a late second attempt of a delivery would land now
    deliveries = {d["id"] for v in done.values() for d in v.get("deliveries", [])}
    h.wait_deliveries(deliveries, timeout=120)
    per_inv = h.receiver.investigations
    by_delivery = h.receiver.accepted()
    before_restore = [
        _finished(done[i]) for i, phase in submitted if phase in ("before", "cut") and i in done
    ]
    drained = max((t for t in before_restore if t is not None), default=restored_wall) - restored_wall
    runs = _completed(h, cut_wall, restored_wall)
    failed = [v for v in done.values() if v["status"] == "failed"]
    figures: dict[str, Any] = {
        "investigations": len(ids),
        "terminal": len(done),
        "lost": len(ids) - len(done),
        "failed": f"{len(failed)} ({', '.join(sorted({str(v.get('stop_reason')) for v in failed})) or '-'})",
        "delivered": sum(1 for i in ids if per_inv.get(i)),
        "duplicate deliveries": sum(1 for i in ids if len(h.receiver.distinct.get(i, ())) > 1),
        "re-sent with the same webhook-id": sum(1 for i in deliveries if by_delivery.get(i, 0) > 1),
        "cut s": plan.cut_s,
        "visibility timeout s": plan.visibility_timeout,
        "tasks held by the cut worker at the cut": len(held),
        "held tasks finished": ", ".join(
            f"{k} ×{v}"
            for k, v in sorted(
                Counter(
                    "+".join(sorted(r.split(":")[0] + "@" + r.split("@")[1] for r in runs.get(t, [])))
                    or "never"
                    for t in held
                ).items()
            )
        )
        or "-",
        "task runs finished": sum(len(v) for v in runs.values()),
        "tasks finished twice (redelivered)": sum(1 for v in runs.values() if len(v) > 1),
        "finished twice (host:step)": "; ".join(sorted({"+".join(v) for v in runs.values() if len(v) > 1}))
        or "-",
        "worker rejoined after s": rejoin.get("rejoined", "never"),
        "backlog drained after s": round(max(0.0, drained), 1),
        "delay ms": f"{plan.delay_ms[0]:g}±{plan.delay_ms[1]:g}",
        "topology": h.topo.token,
    }
    for phase in PHASES:
        lat = [s for i, p in submitted if p == phase and i in done and (s := _latency(done[i])) is not None]
        figures[f"p50/p95 s {phase}"] = f"{_pct(lat, 50)}/{_pct(lat, 95)} ({len(lat)})"
    ok = (figures["lost"] == 0 and figures["duplicate deliveries"] == 0 and figures["delivered"] == len(ids)
          and "rejoined" in rejoin)
    return Result("partition", ok, figures)
