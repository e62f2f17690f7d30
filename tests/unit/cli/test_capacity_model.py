"""The capacity model's arithmetic (`cli.capacity.model`) and the MONITOR line parser of the Redis replay."""

from __future__ import annotations

from typing import Any

import pytest

from cli.capacity.model import llm_usage, per_investigation, scale
from cli.capacity.saturate import parse_monitor_line, whole_transactions


def _measured() -> dict[str, Any]:
    return {
        "n": 10,
        "tasks": {
            "sleuth.start": {"runs": 10, "cpu_ms": 200.0, "sql SELECT": 30, "sql INSERT": 10},
            "sleuth.retrieve": {"runs": 40, "cpu_ms": 400.0, "sql SELECT": 0},
            "sleuth.deliver": {"runs": 10, "cpu_ms": 100.0, "sql UPDATE": 20},
        },
        "queues": {"sleuth.start": "plan", "sleuth.retrieve": "retrieve", "sleuth.deliver": "deliver"},
        "api_statements": {"INSERT": 24, "SELECT": 12},
        "api_submissions": 12,
        "cpu_process_s": {"worker": 1.0, "api": 0.5},
        "tables": {
            "trace_event": {"ins": 150, "upd": 0, "del": 0, "bytes": 80_000},
            "investigation": {"ins": 10, "upd": 30, "del": 0, "bytes": 20_000},
        },
        "redis_calls": {"hset": 500, "get": 300},
        "redis_in": 100_000,
        "redis_out": 50_000,
        "redis_cpu_s": 0.2,
        "redis_lifetimes": {
            "forever": 0,
            "byte_seconds": 12 * 1_000_000,
            "family_byte_seconds": {"sleuth:hits": 12e6},
            "families": {"sleuth:hits": 1200},
        },
        "pg_cpu_s": 0.5,
        "stored": {"evidence text bytes": 240_000},
    }


def test_per_investigation_divides_by_the_measured_count_and_groups_cpu_by_queue() -> None:
    per = per_investigation(_measured())
    assert per["queue cpu ms"] == {"deliver": 10.0, "plan": 20.0, "retrieve": 40.0}
    assert per["broker messages"] == 6.0  # every task run is one message
    assert per["worker overhead cpu ms"] == 30.0  # the worker's CPU not spent in tasks
    assert per["sql statements"] == {"SELECT": 4.0, "INSERT": 3.0, "UPDATE": 2.0}  # API's per submission
    assert per["rows written"] == {"investigation": 4.0, "trace_event": 15.0}
    assert per["redis commands"] == 80.0 and per["redis byte-seconds"] == 1_000_000  # warm-up keys counted
    assert per["redis bytes by key family"] == {"sleuth:hits": 100} and per["postgres backend cpu ms"] == 50.0
    assert per["steps"]["sleuth.retrieve"] == {"runs": 4.0, "cpu ms": 40.0, "cpu ms per run": 10.0}


def test_scale_sizes_a_day_at_its_peak_and_names_the_first_limit() -> None:
    per = per_investigation(_measured())
    redis = [
        {"ops/s": 9000, "ops per Redis CPU-second": 40_000},
        {"ops/s": 9500, "ops per Redis CPU-second": 30_000},
    ]
    pg = [{"investigations/s": 5.0}, {"investigations/s": 10.0}]
    out = scale(per, per_day=864_000, peak=3.0, redis_sat=redis, pg_sat=pg, llm=None)
    assert out["investigations/s average"] == 10.0 and out["investigations/s peak"] == 30.0
    assert out["worker cores at peak (70 % busy)"]["retrieve"] == pytest.approx(40 * 30 / 1000 / 0.7, abs=0.1)
    assert out["redis ops/s at peak"] == 2400
    assert out["redis: share of one core at peak (by ops per CPU-second)"] == 0.08  # on the lowest level
    assert out["redis: share of one core at peak (by its CPU ms per investigation)"] == 0.6
    assert out["redis memory steady state MB"] == 10.0  # Little: byte-seconds × average arrivals
    assert out["postgres: share of this host's write capacity at peak"] == 3.0
    assert out["first limit"] == "postgres (this host)"


def test_llm_usage_averages_tokens_and_cost_per_route() -> None:
    call = {"model": "claude-haiku-5-5", "input_tokens": 1000, "output_tokens": 100,
            "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    usage = llm_usage([{"route": "lookup", "calls": [call, call]}, {"route": "direct", "calls": [call]}])
    assert usage["by route"]["lookup"]["calls"] == 2 and usage["by route"]["direct"]["calls"] == 1
    assert usage["by route"]["all"]["input"] == 1500
    assert usage["tokens per investigation"] == pytest.approx(1650)
    assert usage["usd per investigation"] > 0


def test_monitor_lines_are_parsed_and_script_internals_and_blocking_reads_left_out() -> None:
    assert parse_monitor_line(b'+1.2 [0 127.0.0.1:5] "SET" "sleuth:k" "a \\"b\\"\\x00"') == (
        b"127.0.0.1:5", [b"SET", b"sleuth:k", b'a "b"\x00'])
    assert parse_monitor_line(b'+1.2 [0 lua] "INCR" "x"') is None
    assert parse_monitor_line(b'+1.2 [0 127.0.0.1:5] "BRPOP" "q" "1"') is None
    assert parse_monitor_line(b"OK") is None


def test_transactions_are_replayed_whole_though_monitor_interleaves_them() -> None:
    a, b = b"127.0.0.1:1", b"127.0.0.1:2"
    logged = [
        (a, [b"EXEC"]),  # the tail of a transaction begun before the recording
        (a, [b"MULTI"]),
        (b, [b"MULTI"]),  # another client's transaction runs while a's is queued
        (b, [b"INCR", b"n"]),
        (b, [b"EXEC"]),
        (b, [b"GET", b"n"]),
        (a, [b"SET", b"k", b"1"]),  # a's queued commands are printed when its EXEC runs
        (a, [b"EXEC"]),
        (b, [b"MULTI"]),
        (b, [b"DISCARD"]),
        (a, [b"MULTI"]),  # cut by the end of the recording
    ]
    assert whole_transactions(logged) == [
        [b"MULTI"], [b"INCR", b"n"], [b"EXEC"],
        [b"GET", b"n"],
        [b"MULTI"], [b"SET", b"k", b"1"], [b"EXEC"],
    ]
