"""The quality page's figures for one tenant and period, aggregated in the database (a few GROUP BY queries
over indexed columns, so 100,000 investigations stay well under a second on PostgreSQL): volume per week by
status, counts by route and audience, current ratings, draft outcomes, latency percentiles, tool and delivery
failures."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Float, and_, cast, func, literal_column, select, text
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, col

from storage.feedback_models import Feedback, Outcome
from storage.models import Delivery, Investigation, TraceEvent

TERMINAL = ("answered", "refused", "failed")
TOOL_EVENTS = ("tool_call", "tool_refused")


@dataclass
class Slice:
    """The counts of one week, route or audience."""

    investigations: int = 0
    status: dict[str, int] = field(default_factory=dict)
    ratings: dict[str, int] = field(default_factory=dict)
    drafts: dict[str, int] = field(default_factory=dict)
    reopened: int = 0
    followed: int = 0  # investigations with a recorded outcome (the reopen rate's denominator)

    def row(self) -> dict[str, Any]:
        return {"investigations": self.investigations, **{s: self.status.get(s, 0) for s in TERMINAL},
                **{r: self.ratings.get(r, 0) for r in ("helpful", "partly", "wrong")},
                **{d: self.drafts.get(d, 0) for d in ("unchanged", "edited", "unused")},
                "reopened": self.reopened, "followed": self.followed}


@dataclass
class QualityReport:
    since: datetime
    until: datetime
    total: Slice = field(default_factory=Slice)
    weeks: dict[str, Slice] = field(default_factory=lambda: defaultdict(Slice))
    routes: dict[str, Slice] = field(default_factory=lambda: defaultdict(Slice))
    audiences: dict[str, Slice] = field(default_factory=lambda: defaultdict(Slice))
    latency: dict[str, dict[str, float | None]] = field(default_factory=dict)  # route|"all" → p50, p95
    edit_ratio_mean: float | None = None
    tools: dict[str, int] = field(default_factory=dict)  # calls, errors, refused
    deliveries: dict[str, dict[str, int]] = field(default_factory=dict)  # channel → status → count


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def _week(session: Session, column: Any) -> ColumnElement[Any]:
    """The Monday (YYYY-MM-DD) of a timestamp's ISO week."""
    if _dialect(session) == "postgresql":
        return func.to_char(func.date_trunc("week", column), "YYYY-MM-DD")
    return func.strftime("%Y-%m-%d", column, "weekday 0", "-6 days")


def _seconds(session: Session) -> ColumnElement[Any]:
    start, end = col(Investigation.created_at), col(Investigation.finished_at)
    if _dialect(session) == "postgresql":
        return func.extract("epoch", end - start)
    return (func.julianday(end) - func.julianday(start)) * literal_column("86400.0")


def _in_period(since: datetime, until: datetime) -> ColumnElement[bool]:
    return and_(col(Investigation.created_at) >= since, col(Investigation.created_at) < until)


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _slices(report: QualityReport, week: str | None, route: str | None, audience: str | None) -> list[Slice]:
    found = [report.total, report.routes[route or "none"], report.audiences[audience or "agent"]]
    if week is not None:
        found.append(report.weeks[week])
    return found


def quality_report(session: Session, *, tenant_id: str, since: datetime, until: datetime) -> QualityReport:
    if _dialect(session) == "postgresql":
        # psycopg prepares a statement run five times, and PostgreSQL then plans it once for any period; a
        # plan made for 30 days read a year's rows 2.5 times slower. Plan each run for its own period.
        session.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    report = QualityReport(since, until)
    inv = Investigation
    mine = and_(col(inv.tenant_id) == tenant_id, _in_period(since, until))
    week = _week(session, col(inv.created_at)).label("week")
    stmt = (select(week, col(inv.route), col(inv.audience), col(inv.status), func.count()).where(mine)
            .group_by(week, col(inv.route), col(inv.audience), col(inv.status)))
    for wk, route, audience, status, n in session.execute(stmt).all():
        for piece in _slices(report, wk, route, audience):
            piece.investigations += n
            piece.status[status] = piece.status.get(status, 0) + n

    fb = Feedback
    stmt_r = (
        select(col(inv.route), col(inv.audience), col(fb.rating), func.count())
        .join(inv, col(inv.id) == col(fb.investigation_id))
        .where(col(fb.tenant_id) == tenant_id, col(fb.current).is_(True), mine)
        .group_by(inv.route, col(inv.audience), col(fb.rating))
    )
    for route, audience, rating, n in session.execute(stmt_r).all():
        for piece in _slices(report, None, route, audience):
            piece.ratings[rating] = piece.ratings.get(rating, 0) + n

    out = Outcome
    stmt_o = (
        select(
            col(inv.route),
            col(inv.audience),
            col(out.draft),
            col(out.reopened),
            func.count(),
            func.avg(out.edit_ratio),
        )
        .join(inv, col(inv.id) == col(out.investigation_id))
        .where(col(out.tenant_id) == tenant_id, mine)
        .group_by(inv.route, col(inv.audience), col(out.draft), col(out.reopened))
    )
    ratio_sum, ratio_n = 0.0, 0
    for route, audience, draft, reopened, n, mean in session.execute(stmt_o).all():
        for piece in _slices(report, None, route, audience):
            piece.followed += n
            piece.reopened += n if reopened else 0
            if draft:
                piece.drafts[draft] = piece.drafts.get(draft, 0) + n
        if mean is not None and draft == "edited":
            ratio_sum, ratio_n = ratio_sum + float(mean) * n, ratio_n + n
    report.edit_ratio_mean = ratio_sum / ratio_n if ratio_n else None

    report.latency = _latency(session, mine)
    report.tools = _tools(session, mine)
    stmt_d = (select(col(Delivery.channel), col(Delivery.status), func.count())
              .where(col(Delivery.tenant_id) == tenant_id, col(Delivery.created_at) >= since,
                     col(Delivery.created_at) < until).group_by(Delivery.channel, col(Delivery.status)))
    for channel, status, n in session.execute(stmt_d).all():
        report.deliveries.setdefault(channel, {})[status] = n
    return report


def _latency(session: Session, mine: ColumnElement[bool]) -> dict[str, dict[str, float | None]]:
    """p50 and p95 of intake → terminal, in seconds, overall and per route (on PostgreSQL one pass:
    ROLLUP)."""
    seconds = cast(_seconds(session), Float)
    done = and_(mine, col(Investigation.finished_at).is_not(None))
    route = col(Investigation.route)
    if _dialect(session) == "postgresql":
        p50 = func.percentile_cont(0.5).within_group(seconds)
        p95 = func.percentile_cont(0.95).within_group(seconds)
        found: dict[str, dict[str, float | None]] = {}
        for name, total, a, b in session.execute(select(route, func.grouping(route), p50, p95).where(done)
                                                 .group_by(func.rollup(route))).all():
            found["all" if total else name or "none"] = {"p50": a, "p95": b}
        return found
    values: dict[str, list[float]] = defaultdict(list)
    for name, s in session.execute(select(route, seconds).where(done)).all():
        values[name or "none"].append(float(s))
        values["all"].append(float(s))
    return {k: {"p50": _percentile(v, 0.5), "p95": _percentile(v, 0.95)} for k, v in values.items()}


def _tools(session: Session, mine: ColumnElement[bool]) -> dict[str, int]:
    """Tool calls and refusals counted from the kind index alone; the calls that ended in an error read the
    calls' own rows (the error is in the event's data), found through the same index."""
    ev = TraceEvent
    joined = (col(Investigation.id) == col(ev.investigation_id))
    found = {"calls": 0, "errors": 0, "refused": 0}
    for kind, n in session.execute(select(col(ev.kind), func.count()).join(Investigation, joined)
                                   .where(col(ev.kind).in_(TOOL_EVENTS), mine).group_by(col(ev.kind))).all():
        found["calls" if kind == "tool_call" else "refused"] = int(n)
    if found["calls"]:
        error = col(ev.data)["error"].as_string()
        found["errors"] = int(
            session.execute(
                select(func.count())
                .select_from(ev)
                .join(Investigation, joined)
                .where(col(ev.kind) == "tool_call", error.is_not(None), error != "", mine)
            ).scalar_one()
        )
    return found


def rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


__all__ = ["QualityReport", "Slice", "quality_report", "rate"]
