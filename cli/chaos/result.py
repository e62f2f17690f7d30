"""What a chaos scenario returns, and the small helpers scenarios share: numbered questions, an
investigation's latency, percentiles."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

QUESTIONS = [
    "What does error ERR_4021 mean?", "How do I reset my password?", "Which plan includes SSO?",
    "How long is a password reset link valid?", "How do I export my data?", "What does ERR_4030 mean?",
    "How do I set up two-factor authentication?", "Where can I download invoices?",
]


@dataclass
class Result:
    name: str
    passed: bool | None  # None: not run
    figures: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    charts: dict[str, Any] = field(default_factory=dict)


def _q(i: int) -> str:
    return f"{QUESTIONS[i % len(QUESTIONS)]} (case {i})"


def _latency(view: dict[str, Any]) -> float | None:
    try:
        return (datetime.fromisoformat(view["finished_at"]) - datetime.fromisoformat(view["created_at"])
                ).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))], 2)
