"""Counters loaded into the measured API and worker processes (`python -c`, before `cli.main`): each Celery
task's CPU time (this process's, its threads included) and SQL statements by verb, one JSON line per task
run; the API process's statements by verb once, when it exits. Appended to one file per process."""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

_statements: Counter[str] = Counter()  # this process's, since its last task
_lock = threading.Lock()
_started: dict[str, tuple[float, Counter[str]]] = {}
_folder: Path | None = None


def _verb(statement: str) -> str:
    head = statement.lstrip().split(None, 1)
    return head[0].upper() if head else "?"


def _on_statement(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
    with _lock:
        _statements[_verb(statement)] += 1


def _write(record: dict[str, Any]) -> None:
    assert _folder is not None
    with open(_folder / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def _prerun(task_id: str | None = None, **_: Any) -> None:
    with _lock:
        _started[task_id or ""] = (time.process_time(), Counter(_statements))


def _postrun(task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any) -> None:
    with _lock:
        began, seen = _started.pop(task_id or "", (time.process_time(), Counter(_statements)))
        statements = dict(_statements - seen)
    _write({"task": getattr(task, "name", "?"), "cpu_ms": round((time.process_time() - began) * 1000, 3),
            "state": state, "statements": statements})


def _at_exit() -> None:
    with _lock:
        statements = dict(_statements)
    _write({"process": "exit", "cpu_ms": round(time.process_time() * 1000, 1), "statements": statements})


def install(folder: str, *, process: str) -> None:
    """Count in this process (`process`: "worker" records per task, "api" once at exit)."""
    global _folder
    from celery import signals
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    _folder = Path(folder)
    _folder.mkdir(parents=True, exist_ok=True)
    event.listen(Engine, "before_cursor_execute", _on_statement)
    if process == "worker":
        signals.task_prerun.connect(_prerun, weak=False)
        signals.task_postrun.connect(_postrun, weak=False)
    else:
        atexit.register(_at_exit)


def read(folder: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        records.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return records
