"""Saturation runs: the dedicated Redis driven with the commands investigations sent it (recorded with
MONITOR, replayed one by one from several processes), and PostgreSQL with the repositories' writes of an
investigation (create, trace events, evidence, finish), from 1, 2, 4, 8 processes until throughput flattens.
Redis's own CPU is read from `INFO cpu`: ops per CPU-second of its one thread do not move with host load."""

from __future__ import annotations

import codecs
import multiprocessing
import re
import socket
import threading
import time
import uuid
from typing import Any

ARG = re.compile(rb'"((?:[^"\\]|\\.)*)"')
# Blocking, connection and admin commands are not load an investigation adds (a worker's BRPOP waits).
SKIP = {
    b"BRPOP",
    b"BLPOP",
    b"BLMOVE",
    b"BRPOPLPUSH",
    b"BZPOPMIN",
    b"SUBSCRIBE",
    b"PSUBSCRIBE",
    b"UNSUBSCRIBE",
    b"PUNSUBSCRIBE",
    b"MONITOR",
    b"CLIENT",
    b"INFO",
    b"HELLO",
    b"SELECT",
    b"QUIT",
    b"COMMAND",
    b"AUTH",
    b"SCAN",
    b"DBSIZE",
    b"MEMORY",
    b"TTL",
    b"CONFIG",
    b"SCRIPT",
}


def parse_monitor_line(line: bytes) -> tuple[bytes, list[bytes]] | None:
    """The client and the arguments of one MONITOR line (`+<time> [<db> <client>] "CMD" "arg" …`), None
    for a command a Lua script ran or one that is not load (SKIP)."""
    head, _, rest = line.partition(b"] ")
    if not rest or b" lua" in head:
        return None
    args = [codecs.escape_decode(a)[0] for a in ARG.findall(rest)]
    client = head.rpartition(b" ")[2]
    return (client, args) if args and args[0].upper() not in SKIP else None


def whole_transactions(logged: list[tuple[bytes, list[bytes]]]) -> list[list[bytes]]:
    """The commands in the order Redis ran them, each transaction in one piece. MONITOR prints a client's
    MULTI when it arrives but the queued commands just before its EXEC, so other clients' commands fall in
    between; replayed on one connection those would run inside the wrong transaction (and a second MULTI
    fails). A transaction the recording cut (its MULTI before the start, or its EXEC after the end) is
    replayed as plain commands, or left out when none of them ran yet."""
    open_at: dict[bytes, list[list[bytes]]] = {}
    out: list[list[bytes]] = []
    for client, args in logged:
        name = args[0].upper()
        if name == b"MULTI":
            open_at[client] = []
        elif name in (b"EXEC", b"DISCARD"):
            body = open_at.pop(client, None)
            if body is not None and name == b"EXEC":
                out.extend([[b"MULTI"], *body, args])
        elif client in open_at:
            open_at[client].append(args)
        else:
            out.append(args)
    return out


class Recorder:
    """MONITOR on a connection of its own, in a thread; `stop()` returns the commands clients sent (the
    commands Lua scripts ran inside EVAL/EVALSHA are left out: the EVAL line stands for them)."""

    def __init__(self, port: int) -> None:
        self.logged: list[tuple[bytes, list[bytes]]] = []
        self._sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self._sock.sendall(b"MONITOR\r\n")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        buffer = b""
        self._sock.settimeout(0.5)
        while not self._stop.is_set():
            try:
                chunk = self._sock.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            *lines, buffer = buffer.split(b"\r\n")
            for line in lines:
                entry = parse_monitor_line(line)
                if entry:
                    self.logged.append(entry)

    def stop(self) -> list[list[bytes]]:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()
        return whole_transactions(self.logged)


def _fresh(commands: list[list[bytes]], ids: list[bytes]) -> list[list[bytes]]:
    """The commands with each recorded investigation id replaced by a new one (new keys, as new
    investigations make)."""
    new = {i: uuid.uuid4().hex.encode() for i in ids}
    out = []
    for args in commands:
        replaced = []
        for a in args:
            for old, fresh in new.items():
                if old in a:
                    a = a.replace(old, fresh)
            replaced.append(a)
        out.append(replaced)
    return out


# Modules every saturation process needs, imported once by the fork server its processes fork from, so a
# level's processes start without importing them again (spawned ones would, and the start-ups of 8 or 16 of
# them compete with the run on the host's CPUs).
PRELOAD = ["cli.capacity.saturate", "redis", "sqlalchemy", "sqlmodel", "storage.models",
           "storage.repositories"]


def _context() -> Any:
    """Processes forked from one fork server that has imported `PRELOAD` (started once, reused by every
    level); the fork server holds none of this process's threads or connections."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _replay(port: int, commands: list[list[bytes]], ids: list[bytes], seconds: float, out: Any) -> None:
    import redis

    client = redis.Redis(port=port, socket_timeout=10)
    done = errors = 0
    kinds: dict[str, int] = {}
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        for args in _fresh(commands, ids):
            try:
                client.execute_command(*args)
            except redis.RedisError as e:
                errors += 1
                kind = f"{args[0].decode(errors='replace').upper()}: {str(e)[:80]}"
                kinds[kind] = kinds.get(kind, 0) + 1
            done += 1
    out.put((done, errors, time.monotonic() - began, kinds))


def _merged(counts: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in counts:
        for kind, n in c.items():
            total[kind] = total.get(kind, 0) + n
    return total


def _redis_cpu(port: int) -> float:
    import redis

    info = redis.Redis(port=port).info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


# Processes per saturation level, until throughput flattens on this kind of host (`--levels` chooses others).
REDIS_LEVELS = (1, 2, 4, 8)
POSTGRES_LEVELS = (1, 2, 4, 8, 16)


def saturate_redis(
    port: int,
    commands: list[list[bytes]],
    ids: list[bytes],
    *,
    levels: tuple[int, ...] = REDIS_LEVELS,
    seconds: float = 8.0,
) -> list[dict[str, Any]]:
    ctx = _context()
    rows = []
    for procs in levels:
        queue = ctx.Queue()
        cpu0, t0 = _redis_cpu(port), time.monotonic()
        workers = [
            ctx.Process(target=_replay, args=(port, commands, ids, seconds, queue)) for _ in range(procs)
        ]
        for w in workers:
            w.start()
        results = [queue.get(timeout=seconds + 120) for _ in workers]
        for w in workers:
            w.join(30)
        wall, cpu = time.monotonic() - t0, _redis_cpu(port) - cpu0
        ops = sum(r[0] for r in results)
        rows.append(
            {
                "processes": procs,
                "ops/s": round(sum(r[0] / r[2] for r in results)),
                "errors": sum(r[1] for r in results),
                "error kinds": _merged([r[3] for r in results]),
                "redis CPU share": round(cpu / wall, 2),
                "ops per Redis CPU-second": round(ops / max(cpu, 1e-6)),
                "load": _load(),
            }
        )
    return rows


def _load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def _pg_unit(session: Any, tenant: Any, events: list[dict[str, Any]], evidence: list[dict[str, Any]]) -> int:
    """One investigation's writes through the repositories; returns the rows written."""
    from sqlalchemy import insert

    from storage import repositories as repo
    from storage.models import EvidenceRecord

    inv, _ = repo.create_investigation(session, tenant=tenant, question="capacity saturation", mode="agentic",
                                       callback=None, budget={}, idempotency_key=None, deadline_seconds=600)
    for e in events:  # one transaction per step's event, as the steps write them
        repo.add_event(session, investigation_id=inv.id, step_key=e["step_key"], kind=e["kind"], hop=e["hop"],
                       data=e["data"])
        session.commit()
    if evidence:
        session.execute(insert(EvidenceRecord), [{**row, "investigation_id": inv.id} for row in evidence])
        session.commit()
    repo.finish_investigation(session, investigation_id=inv.id, status="answered", stop_reason="sufficient",
                              answer="a" * 400)
    session.commit()
    return 1 + len(events) + len(evidence) + 1


def _pg_worker(url: str, tenant_id: str, sample: str, seconds: float, out: Any) -> None:
    from sqlmodel import Session, create_engine, select

    from storage.models import EvidenceRecord, Tenant, TraceEvent

    engine = create_engine(url, pool_size=1)
    with Session(engine) as session:
        tenant = session.get(Tenant, tenant_id)
        events = [
            {"step_key": e.step_key, "kind": e.kind, "hop": e.hop, "data": e.data}
            for e in session.exec(select(TraceEvent).where(TraceEvent.investigation_id == sample)).all()
        ]
        evidence = [
            {
                c: getattr(r, c)
                for c in (
                    "evidence_id",
                    "chunk_id",
                    "source_id",
                    "title",
                    "text",
                    "url",
                    "score",
                    "grade",
                    "hop",
                    "query",
                    "visibility",
                    "flagged",
                )
            }
            for r in session.exec(
                select(EvidenceRecord).where(EvidenceRecord.investigation_id == sample)
            ).all()
        ]
        units = rows = 0
        began = time.monotonic()
        while time.monotonic() - began < seconds:
            rows += _pg_unit(session, tenant, events, evidence)
            units += 1
    engine.dispose()
    out.put((units, rows, time.monotonic() - began))


def saturate_postgres(url: str, tenant_id: str, sample: str, *, levels: tuple[int, ...] = POSTGRES_LEVELS,
                      seconds: float = 8.0) -> list[dict[str, Any]]:
    ctx = _context()
    rows = []
    for procs in levels:
        queue = ctx.Queue()
        workers = [
            ctx.Process(target=_pg_worker, args=(url, tenant_id, sample, seconds, queue))
            for _ in range(procs)
        ]
        for w in workers:
            w.start()
        results = [queue.get(timeout=seconds + 180) for _ in workers]
        for w in workers:
            w.join(30)
        rows.append({"processes": procs, "investigations/s": round(sum(r[0] / r[2] for r in results), 1),
                     "rows/s": round(sum(r[1] / r[2] for r in results)), "load": _load()})
    return rows
