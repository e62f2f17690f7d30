"""The capacity run's Redis saturation replays what MONITOR recorded on a real redis-server: transactions
that other clients' commands interleaved still replay without an error."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import redis

from cli.capacity.saturate import Recorder, saturate_redis
from cli.chaos.redis_server import RedisServer


def test_interleaved_transactions_replay_without_errors(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        recorder = Recorder(server.port)
        time.sleep(0.2)  # MONITOR is on before the clients send
        a: Any = redis.Redis(port=server.port).connection_pool.get_connection()  # one client's own socket
        b: Any = redis.Redis(port=server.port).connection_pool.get_connection()
        a.send_command("MULTI")
        a.read_response()
        a.send_command("SET", "inv:abc:k", "1")
        a.read_response()
        with redis.Redis(port=server.port).pipeline(transaction=True) as pipe:  # runs while a's is queued
            pipe.incr("inv:abc:n")
            pipe.get("inv:abc:n")
            pipe.execute()
        b.send_command("MULTI")
        b.read_response()
        a.send_command("EXEC")
        assert a.read_response() == [b"OK"]
        deadline = time.monotonic() + 10
        while len(recorder.logged) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        commands = recorder.stop()  # b's transaction is still open: the recording cut it
        assert [c[0] for c in commands] == [b"MULTI", b"INCRBY", b"GET", b"EXEC", b"MULTI", b"SET", b"EXEC"]
        rows = saturate_redis(server.port, commands, [b"abc"], levels=(1,), seconds=0.3)
        assert rows[0]["ops/s"] > 0 and rows[0]["errors"] == 0, rows
    finally:
        server.stop()
