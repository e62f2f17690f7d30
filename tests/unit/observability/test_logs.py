"""Log format and fields: JSON in production, text on a terminal, bound ids on every line, libraries quiet."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from config.settings import Settings
from observability import logs


@pytest.fixture(autouse=True)
def _restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    logs.clear()
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_lines_carry_the_bound_ids_and_extras() -> None:
    buf = io.StringIO()
    logs.configure(Settings(log_format="json"), stream=buf)
    logs.bind(investigation_id="inv1", tenant_id="t1", task_id="task-9", hop=2)
    logging.getLogger("sleuth.tasks").info("reduce success", extra={"ms": 3.5})
    line = json.loads(buf.getvalue())
    assert line["msg"] == "reduce success" and line["level"] == "INFO" and line["logger"] == "sleuth.tasks"
    assert (line["investigation_id"], line["tenant_id"], line["task_id"], line["hop"], line["ms"]) == (
        "inv1", "t1", "task-9", 2, 3.5)


def test_auto_format_is_text_on_a_terminal_and_json_otherwise() -> None:
    assert logs.use_json(Settings(), io.StringIO()) is True
    assert logs.use_json(Settings(), _Tty()) is False
    tty = _Tty()
    logs.configure(Settings(), stream=tty)
    logs.bind(investigation_id="0123456789abcdef", hop=1)
    logging.getLogger("sleuth.tasks").info("retrieve success")
    text = tty.getvalue()
    assert (
        not text.startswith("{")
        and "retrieve success" in text
        and "inv=01234567…" in text
        and "hop=1" in text
    )


def test_library_noise_is_held_at_warning_and_access_log_kept() -> None:
    buf = io.StringIO()
    logs.configure(Settings(log_format="json"), stream=buf)
    logging.getLogger("alembic.runtime.migration").info("Context impl SQLiteImpl.")
    logging.getLogger("celery.beat").info("Scheduler: Sending due task watchdog")
    logging.getLogger("celery.app.trace").info("Task sleuth.watchdog succeeded")
    assert buf.getvalue() == ""
    logging.getLogger("alembic.runtime.migration").warning("something is wrong")
    logging.getLogger("uvicorn.access").info("GET /healthz 200")
    assert [json.loads(x)["logger"] for x in buf.getvalue().splitlines()] == [
        "alembic.runtime.migration", "uvicorn.access"]


def test_explicit_extra_wins_over_the_bound_context() -> None:
    buf = io.StringIO()
    logs.configure(Settings(log_format="json"), stream=buf)
    logs.bind(hop=1)
    logs.update(investigation_id="inv2")
    logging.getLogger("sleuth").info("x", extra={"hop": 3})
    line = json.loads(buf.getvalue())
    assert line["hop"] == 3 and line["investigation_id"] == "inv2"
