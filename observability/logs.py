"""Logging for every Sleuth process: JSON lines in production, readable lines on a terminal, and the
investigation's ids on every line a task writes.

`configure(settings)` installs one handler on the root logger. `bind(...)` puts ids into a context
variable that a filter copies onto each record, so ``log.info("...")`` anywhere in a step carries
``investigation_id``, ``tenant_id``, ``task_id`` and ``hop`` without passing them around. Libraries
(Alembic, Celery's per-task and beat chatter, httpx, kombu) are held at WARNING; uvicorn's access
and start-up lines stay at INFO.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, TextIO

from config.settings import Settings

CONTEXT_FIELDS = ("investigation_id", "tenant_id", "task_id", "task", "hop", "delivery_id")
_context: ContextVar[dict[str, Any] | None] = ContextVar("sleuth_log_context", default=None)

# Chatty at INFO and not about an investigation: held at WARNING.
QUIET_LOGGERS = (
    "alembic",
    "celery",
    "celery.app.trace",
    "celery.worker.strategy",
    "celery.beat",
    "celery.worker.consumer",
    "kombu",
    "httpx",
    "httpcore",
    "urllib3",
    "elastic_transport",
    "weaviate",
    "anthropic",
    "multipart",
    "asyncio",
    "tornado",
    "flower",
    "sse_starlette",
)
# Kept at INFO: lines an operator reads.
LOUD_LOGGERS = ("uvicorn.access", "uvicorn.error", "celery.apps.worker")
# Record attributes that are not extra fields (uvicorn adds an ANSI-coloured copy of its message).
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",
}


def bind(**fields: Any) -> None:
    """Set (replace) the ids carried by every log line of this context (a task, a request)."""
    _context.set({k: v for k, v in fields.items() if v is not None})


def update(**fields: Any) -> None:
    """Add ids to the current context (e.g. the hop once it is known)."""
    current = dict(_context.get() or {})
    current.update({k: v for k, v in fields.items() if v is not None})
    _context.set(current)


def clear() -> None:
    _context.set(None)


def current() -> dict[str, Any]:
    return dict(_context.get() or {})


class ContextFilter(logging.Filter):
    """Copies the bound ids onto each record (explicit `extra=` values win)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in (_context.get() or {}).items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, the bound ids, any `extra=` fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "msg": record.getMessage(),
        }
        out.update(_extras(record))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``12:00:01 INFO  tasks  step done  inv=3f2a… hop=1 task=sleuth.reduce ms=12.3``."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        extras = _extras(record)
        if "investigation_id" in extras:
            extras["inv"] = str(extras.pop("investigation_id"))[:8] + "…"
        tail = " ".join(f"{k}={v}" for k, v in extras.items() if k not in ("tenant_id", "task_id"))
        line = f"{stamp} {record.levelname:<5} {record.name.removeprefix('sleuth.')}  {record.getMessage()}"
        if tail:
            line += f"  {tail}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def use_json(settings: Settings, stream: TextIO) -> bool:
    if settings.observability.log_format == "json":
        return True
    if settings.observability.log_format == "text":
        return False
    return not (hasattr(stream, "isatty") and stream.isatty())


def configure(settings: Settings, *, stream: TextIO | None = None, level: Any = None) -> logging.Handler:
    """Replace the root logger's handlers with one Sleuth handler (idempotent)."""
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if use_json(settings, stream) else TextFormatter())
    handler.addFilter(ContextFilter())
    handler.set_name("sleuth")
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level if isinstance(level, int) else str(level or settings.observability.log_level).upper())
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in LOUD_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
    for name in ("uvicorn", "uvicorn.access", "uvicorn.error"):
        lg = logging.getLogger(name)
        lg.handlers.clear()
        lg.propagate = True
    return handler
