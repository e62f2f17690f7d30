"""Per-investigation costs, measured on a `MeasuredStack`: before/after snapshots of the dedicated Redis
(`INFO commandstats`, bytes in and out, memory, keys and their TTLs) and of the scratch PostgreSQL database
(`pg_stat_user_tables`, relation sizes), the probe's CPU and statements per task, the broker messages."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import Any

from cli.capacity import probe
from cli.capacity.stack import MeasuredStack
from workers.names import ROUTES

# Questions of the example KB, one per route the router takes (the `(case N)` tail keeps each one new).
QUESTIONS = [
    "What does error ERR_4021 mean?", "How do I reset my password?", "Which plan includes SSO?",
    "How long is a password reset link valid?", "How do I export my data?",
    "How do I set up two-factor authentication and where can I download invoices?",
    "Which plan includes SSO, and what does it cost per seat?", "Hi there, thanks for the help!",
    "What is the boiling point of tungsten?", "What does ERR_4030 mean and how do I fix it?",
]


def question(i: int) -> str:
    return f"{QUESTIONS[i % len(QUESTIONS)]} (case {i})"


def redis_snapshot(h: MeasuredStack) -> dict[str, Any]:
    client = h.redis()
    try:
        stats = client.info("commandstats")
        info = client.info()
        cpu = client.info("cpu")
        return {"calls": {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()},
                "in": int(info["total_net_input_bytes"]), "out": int(info["total_net_output_bytes"]),
                "memory": int(info["used_memory"]), "keys": int(client.dbsize()),
                "cpu": float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"])}
    finally:
        client.close()


def redis_lifetimes(h: MeasuredStack, prefix: str = "sleuth:") -> dict[str, Any]:
    """Bytes held by keys (MEMORY USAGE) by their TTL: kept forever vs expiring, and byte-seconds of the
    expiring ones (their memory × time left: what a steady stream keeps in memory, by Little's law)."""
    client = h.redis()
    forever = expiring = byte_seconds = 0
    families: Counter[str] = Counter()
    family_seconds: Counter[str] = Counter()
    try:
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            size = int(client.memory_usage(key) or 0)
            ttl = int(client.ttl(key))
            family = ":".join(key.decode().split(":")[:2])  # sleuth:hits, sleuth:cache, sleuth:seen …
            families[family] += size
            if ttl < 0:
                forever += size
            else:
                expiring += size
                byte_seconds += size * ttl
                family_seconds[family] += size * ttl
    finally:
        client.close()
    return {
        "forever": forever,
        "expiring": expiring,
        "byte_seconds": byte_seconds,
        "families": dict(families.most_common(8)),
        "family_byte_seconds": dict(family_seconds.most_common(6)),
    }


def pg_backend_cpu(h: MeasuredStack) -> float:
    """CPU seconds of the PostgreSQL backends serving the scratch database (their process titles name it)."""
    import psutil

    name = str(h.database_url).rsplit("/", 1)[-1]
    total = 0.0
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if name in " ".join(proc.info["cmdline"] or []):
                times = proc.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue
    return total


def pg_snapshot(h: MeasuredStack) -> dict[str, Any]:
    from sqlalchemy import create_engine, text

    engine = create_engine(str(h.database_url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "select relname, n_tup_ins, n_tup_upd, n_tup_del, pg_total_relation_size(relid) "
                "from pg_stat_user_tables")).all()
        return {
            r[0]: {"ins": int(r[1]), "upd": int(r[2]), "del": int(r[3]), "bytes": int(r[4])} for r in rows
        }
    finally:
        engine.dispose()


def evidence_bytes(h: MeasuredStack, ids: list[str]) -> dict[str, int]:
    from sqlalchemy import bindparam, create_engine, text

    engine = create_engine(str(h.database_url))
    try:
        with engine.connect() as conn:
            rows, text_bytes = conn.execute(
                text(
                    "select count(*), coalesce(sum(octet_length(text)), 0) from evidence where "
                    "investigation_id in :ids"
                ).bindparams(bindparam("ids", expanding=True)),
                {"ids": ids},
            ).one()
            events, event_bytes = conn.execute(
                text(
                    "select count(*), coalesce(sum(octet_length(data::text)), 0) from trace_event "
                    "where investigation_id in :ids"
                ).bindparams(bindparam("ids", expanding=True)),
                {"ids": ids},
            ).one()
        return {
            "evidence rows": int(rows),
            "evidence text bytes": int(text_bytes),
            "trace events": int(events),
            "trace event bytes": int(event_bytes),
        }
    finally:
        engine.dispose()


def run_batch(
    h: MeasuredStack, n: int, start: int, timeout: float
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """`n` investigations with a webhook callback, submitted one after another; their terminal views."""
    ids = [h.submit("big", question(start + i), callback=True) for i in range(n)]
    deadline = time.monotonic() + timeout  # the callbacks say when: no status polls add to the API's load
    while time.monotonic() < deadline and not all(h.receiver.investigations.get(i) for i in ids):
        time.sleep(0.2)
    return ids, h.wait_all("big", ids, timeout=60)


def per_task(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Task name → runs, CPU ms (sum), SQL statements by verb (sum), from the probe's records."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in records:
        if "task" not in r:
            continue
        row = out[r["task"]]
        row["runs"] += 1
        row["cpu_ms"] += float(r["cpu_ms"])
        for verb, count in r.get("statements", {}).items():
            row[f"sql {verb}"] += count
    return {k: dict(v) for k, v in out.items()}


def measure(
    h: MeasuredStack, *, n: int, warm: int = 2, timeout: float = 900, earlier: int = 0
) -> dict[str, Any]:
    """Run `warm` investigations (models load: not counted), then `n` between two snapshots. `earlier`:
    investigations the stack's API took before this call (its statement counts cover its whole life)."""
    run_batch(h, warm, 10_000, timeout)
    seen = len(probe.read(h.probe_dir))
    redis_before, pg_before, cpu_before = redis_snapshot(h), pg_snapshot(h), h.cpu_seconds()
    pg_cpu_before = pg_backend_cpu(h)
    began = time.monotonic()
    ids, done = run_batch(h, n, 0, timeout)
    wall = time.monotonic() - began
    cpu_after = h.cpu_seconds()
    pg_cpu = pg_backend_cpu(h) - pg_cpu_before
    time.sleep(1.0)  # the last step's writes settle
    redis_after = redis_snapshot(h)
    lifetimes = redis_lifetimes(h)
    records = probe.read(h.probe_dir)[seen:]
    h.stop()  # the API writes its statement counts, backends flush their table statistics as they exit
    time.sleep(1.5)
    pg_after = pg_snapshot(h)
    api_exit = [r for r in probe.read(h.probe_dir) if r.get("process") == "exit"]
    tasks = per_task(records)
    calls = {k: v - redis_before["calls"].get(k, 0) for k, v in redis_after["calls"].items()
             if v - redis_before["calls"].get(k, 0) > 0}
    tables = {t: {k: pg_after[t][k] - pg_before.get(t, {}).get(k, 0) for k in ("ins", "upd", "del", "bytes")}
              for t in pg_after}
    routes = Counter(str(v.get("route")) for v in done.values())
    return {
        "n": n, "terminal": len(done), "wall_s": round(wall, 1), "routes": dict(routes),
        "statuses": dict(Counter(str(v["status"]) for v in done.values())),
        "tasks": tasks, "queues": {t: ROUTES.get(t, "?") for t in tasks},
        "cpu_process_s": {k: round(cpu_after[k] - cpu_before.get(k, 0.0), 2) for k in cpu_after},
        "redis_calls": calls, "redis_in": redis_after["in"] - redis_before["in"],
        "redis_out": redis_after["out"] - redis_before["out"],
        "redis_memory": redis_after["memory"] - redis_before["memory"],
        "redis_cpu_s": round(redis_after["cpu"] - redis_before["cpu"], 3), "pg_cpu_s": round(pg_cpu, 3),
        "redis_keys": redis_after["keys"] - redis_before["keys"], "redis_lifetimes": lifetimes,
        "tables": {t: v for t, v in tables.items() if any(v.values())},
        "api_statements": api_exit[-1]["statements"] if api_exit else {},
        "api_submissions": n + warm + earlier,
        "stored": evidence_bytes(h, ids), "ids": ids,
    }
