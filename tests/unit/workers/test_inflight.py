"""What the workers hold: the first of the three questions waits out the inspect timeout; the next two expect
as many replies as it got and end when those are in (a broadcast otherwise collects replies for its whole
timeout, and a watchdog run asks twice: six timeouts overran the soft time limit a short task limit
leaves)."""

from __future__ import annotations

from typing import Any

from workers.inflight import held_by_workers


class _Inspect:
    def __init__(self, control: _Control, timeout: float, limit: int | None) -> None:
        self.control, self.timeout, self.limit = control, timeout, limit

    def _ask(self, question: str) -> dict[str, list[dict[str, Any]]] | None:
        self.control.asked.append((question, self.timeout, self.limit))
        return self.control.replies.get(question)

    def active(self) -> dict[str, list[dict[str, Any]]] | None:
        return self._ask("active")

    def reserved(self) -> dict[str, list[dict[str, Any]]] | None:
        return self._ask("reserved")

    def scheduled(self) -> dict[str, list[dict[str, Any]]] | None:
        return self._ask("scheduled")


class _Control:
    """The part of `celery.app.control.Control` that `held_by_workers` uses, recording each question."""

    def __init__(self, replies: dict[str, dict[str, list[dict[str, Any]]] | None]) -> None:
        self.replies = replies
        self.asked: list[tuple[str, float, int | None]] = []

    def inspect(self, timeout: float = 1.0, limit: int | None = None) -> _Inspect:
        return _Inspect(self, timeout, limit)


class _App:
    def __init__(self, control: _Control) -> None:
        self.control = control


def _task(inv: str) -> dict[str, Any]:
    return {"args": [inv], "kwargs": {"hop": 1}}


def test_the_next_questions_expect_the_workers_that_answered_the_first() -> None:
    control = _Control({
        "active": {"w0@a": [_task("inv-1")], "w1@b": []},
        "reserved": {"w0@a": [_task("inv-2")], "w1@b": []},
        "scheduled": {"w1@b": [{"request": _task("inv-3")}]},
    })
    held = held_by_workers(_App(control), 2.0)
    assert control.asked == [("active", 2.0, None), ("reserved", 2.0, 2), ("scheduled", 2.0, 2)]
    assert [h.split()[0] for h in held] == ["['inv-1']", "['inv-2']", "['inv-3']"]


def test_when_no_worker_answers_the_next_questions_wait_out_the_timeout() -> None:
    control = _Control({"active": None, "reserved": {"w0@a": [_task("inv-9")]}, "scheduled": None})
    held = held_by_workers(_App(control), 1.5)
    assert control.asked == [("active", 1.5, None), ("reserved", 1.5, None), ("scheduled", 1.5, None)]
    assert held == ["['inv-9'] {'hop': 1}"]
