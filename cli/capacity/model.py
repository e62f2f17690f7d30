"""From measured per-investigation costs to a deployment of N investigations a day with a peak factor:
worker cores per queue, broker messages/s, Redis ops/s and memory, PostgreSQL writes/s and storage, LLM
tokens and cost; and which limit, measured by a saturation run, is reached first. Pure arithmetic."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

DAY = 86_400
MONTH_DAYS = 30
TARGET_UTILISATION = 0.7  # cores are sized to run at 70 % at the peak


def per_investigation(m: dict[str, Any]) -> dict[str, Any]:
    n = m["n"]
    steps: dict[str, dict[str, float]] = {}
    queues: dict[str, float] = defaultdict(float)
    sql: dict[str, float] = defaultdict(float)
    runs = 0.0
    for task, row in sorted(m["tasks"].items()):
        steps[task] = {"runs": round(row["runs"] / n, 2), "cpu ms": round(row["cpu_ms"] / n, 1),
                       "cpu ms per run": round(row["cpu_ms"] / row["runs"], 1)}
        queues[m["queues"][task]] += row["cpu_ms"] / n
        runs += row["runs"]
        for key, value in row.items():
            if key.startswith("sql "):
                sql[key.removeprefix("sql ")] += value / n
    for verb, count in m["api_statements"].items():
        sql[verb] += count / m["api_submissions"]
    task_cpu = sum(r["cpu_ms"] for r in m["tasks"].values())
    tables = m["tables"]
    calls = m["redis_calls"]
    life = m["redis_lifetimes"]
    held = n + 2  # the warm-up's keys are in the lifetimes too
    return {
        "steps": steps,
        "queue cpu ms": {q: round(v, 1) for q, v in sorted(queues.items())},
        "worker overhead cpu ms": round((m["cpu_process_s"].get("worker", 0) * 1000 - task_cpu) / n, 1),
        "api cpu ms": round(m["cpu_process_s"].get("api", 0) * 1000 / n, 1),
        "broker messages": round(runs / n, 2),
        "redis commands": round(sum(calls.values()) / n, 1),
        "redis cpu ms": round(m.get("redis_cpu_s", 0.0) * 1000 / n, 2),
        "redis top commands": {
            k: round(v / n, 1) for k, v in sorted(calls.items(), key=lambda kv: -kv[1])[:8]
        },
        "redis bytes in": round(m["redis_in"] / n),
        "redis bytes out": round(m["redis_out"] / n),
        "redis bytes kept forever": round(life["forever"] / held),
        "redis byte-seconds": round(life["byte_seconds"] / held),
        "redis byte-seconds by key family": {
            k: round(v / held) for k, v in life["family_byte_seconds"].items()
        },
        "redis bytes by key family": {k: round(v / held) for k, v in life["families"].items()},
        "postgres backend cpu ms": round(m.get("pg_cpu_s", 0.0) * 1000 / n, 2),
        "sql statements": {k: round(v, 1) for k, v in sorted(sql.items(), key=lambda kv: -kv[1])},
        "rows written": {
            t: round((v["ins"] + v["upd"] + v["del"]) / n, 1) for t, v in sorted(tables.items())
        },
        "db bytes": {t: round(v["bytes"] / n) for t, v in sorted(tables.items())},
        "stored": {k: round(v / n, 1) for k, v in m["stored"].items()},
    }


def scale(per: dict[str, Any], *, per_day: int, peak: float, redis_sat: list[dict[str, Any]],
          pg_sat: list[dict[str, Any]], llm: dict[str, Any] | None, retention_days: int = 90,
          ram_bytes: int = 0) -> dict[str, Any]:
    average = per_day / DAY
    top = average * peak
    cores = {q: round(ms * top / 1000 / TARGET_UTILISATION, 1) for q, ms in per["queue cpu ms"].items()}
    cores["worker overhead"] = round(per["worker overhead cpu ms"] * top / 1000 / TARGET_UTILISATION, 1)
    cores["api"] = round(per["api cpu ms"] * top / 1000 / TARGET_UTILISATION, 1)
    redis_ops = per["redis commands"] * top
    # The lowest of the levels: the most contended, so the one to size on.
    redis_per_cpu = min((r["ops per Redis CPU-second"] for r in redis_sat), default=0)
    redis_best = max((r["ops/s"] for r in redis_sat), default=0)
    rows = sum(per["rows written"].values())
    pg_best = max((r["investigations/s"] for r in pg_sat), default=0.0)
    db_bytes = sum(per["db bytes"].values())
    trace_share = sum(v for t, v in per["db bytes"].items() if t in ("trace_event", "evidence")) / max(
        db_bytes, 1
    )
    out: dict[str, Any] = {
        "investigations/s average": round(average, 2),
        "investigations/s peak": round(top, 2),
        "worker cores at peak (70 % busy)": cores,
        "broker messages/s at peak": round(per["broker messages"] * top),
        "redis ops/s at peak": round(redis_ops),
        "redis: one thread's ops per CPU-second (measured, lowest level)": redis_per_cpu,
        "redis: share of one core at peak (by its CPU ms per investigation)": round(
            per["redis cpu ms"] * top / 1000, 2
        ),
        "redis: share of one core at peak (by ops per CPU-second)": round(
            redis_ops / max(redis_per_cpu, 1), 2
        ),
        "redis: best ops/s on this host (measured)": redis_best,
        "redis memory steady state MB": round(per["redis byte-seconds"] * average / 1e6, 1),
        "redis memory steady state MB by key family": {
            k: round(v * average / 1e6, 1) for k, v in per["redis byte-seconds by key family"].items()
        },
        "redis memory never expiring MB per day": round(per["redis bytes kept forever"] * per_day / 1e6, 1),
        "postgres rows written/s at peak": round(rows * top),
        "postgres statements/s at peak": round(sum(per["sql statements"].values()) * top),
        "postgres backend cores at peak (70 % busy)": round(
            per["postgres backend cpu ms"] * top / 1000 / TARGET_UTILISATION, 2
        ),
        "postgres: investigations' writes/s on this host (measured)": pg_best,
        "postgres: share of this host's write capacity at peak": round(top / max(pg_best, 0.1), 2),
        "postgres storage GB per month (no retention)": round(db_bytes * per_day * MONTH_DAYS / 1e9, 1),
        f"postgres storage GB steady with {retention_days}-day retention of events and evidence": round(
            db_bytes * trace_share * per_day * retention_days / 1e9, 1
        ),
        "postgres storage GB per month kept (answers, deliveries)": round(
            db_bytes * (1 - trace_share) * per_day * MONTH_DAYS / 1e9, 1
        ),
    }
    if llm:
        out["llm tokens per day (millions)"] = round(llm["tokens per investigation"] * per_day / 1e6)
        out["llm cost per day USD"] = round(llm["usd per investigation"] * per_day)
    limits = {
        "redis (one thread)": max(
            out["redis: share of one core at peak (by its CPU ms per investigation)"],
            out["redis: share of one core at peak (by ops per CPU-second)"],
        ),
        "postgres (this host)": out["postgres: share of this host's write capacity at peak"],
    }
    if ram_bytes:
        limits["redis memory (this host's RAM)"] = round(
            out["redis memory steady state MB"] * 1e6 / ram_bytes, 2
        )
    out["first limit"] = max(limits, key=lambda k: limits[k])
    out["limits (needed ÷ measured capacity)"] = limits
    return out


def llm_usage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per route and overall: investigations, calls, tokens (in, out, cache r/w) and USD per investigation,
    from the `llm_call` trace events of each investigation (`rows`: route + its events' data)."""
    from adapters.llm.claude_pricing import cost

    by_route: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        for route in (row["route"], "all"):
            acc = by_route[route]
            acc["investigations"] += 1
            for call in row["calls"]:
                acc["calls"] += 1
                acc["input"] += int(call.get("input_tokens") or 0)
                acc["output"] += int(call.get("output_tokens") or 0)
                acc["cache read"] += int(call.get("cache_read_input_tokens") or 0)
                acc["cache write"] += int(call.get("cache_creation_input_tokens") or 0)
                acc["usd"] += cost(str(call.get("model")), call) or 0.0
    table = {
        route: {
            k: round(v / acc["investigations"], 5 if k == "usd" else 1) if k != "investigations" else v
            for k, v in acc.items()
        }
        for route, acc in by_route.items()
    }
    every = table.get("all", {})
    tokens = sum(every.get(k, 0) for k in ("input", "output", "cache read", "cache write"))
    return {
        "by route": table,
        "tokens per investigation": tokens,
        "usd per investigation": every.get("usd", 0.0),
    }
