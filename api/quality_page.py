"""The quality page of one tenant: volume per week (an SVG bar chart drawn here, no script, no CDN), outcomes,
rating shares, draft use and reopen rate, by route and by audience, latency, tool and delivery failures; and
the same breakdown as CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

from api.pages import e, layout
from storage._quality import QualityReport, Slice, rate

COLOURS = {"answered": "#2e7d32", "refused": "#b26a00", "failed": "#c62828"}
COLUMNS = (
    "investigations",
    "answered",
    "refused",
    "failed",
    "helpful",
    "partly",
    "wrong",
    "unchanged",
    "edited",
    "unused",
    "reopened",
    "followed",
)


def _pct(part: int, whole: int) -> str:
    share = rate(part, whole)
    return "—" if share is None else f"{share:.0%}"


def weekly_chart(weeks: Mapping[str, Slice]) -> str:
    """Stacked bars per week (answered, refused, failed), with a text alternative."""
    if not weeks:
        return '<p class="muted">No investigations in this period.</p>'
    keys = sorted(weeks)
    top = max(w.investigations for w in weeks.values()) or 1
    bar, gap, height = 36, 12, 160
    parts = []
    for i, key in enumerate(keys):
        x, y = 40 + i * (bar + gap), float(height + 10)
        for status in ("answered", "refused", "failed"):
            n = weeks[key].status.get(status, 0)
            h = n / top * height
            y -= h
            parts.append(f'<rect x="{x}" y="{y:.1f}" width="{bar}" height="{h:.1f}" fill="{COLOURS[status]}">'
                         f"<title>{e(key)}: {n} {status}</title></rect>")
        parts.append(
            f'<text x="{x + bar / 2}" y="{height + 26}" font-size="10" '
            f'text-anchor="middle">{e(key[5:])}</text>'
        )
    width = 60 + len(keys) * (bar + gap)
    alt = "; ".join(f"week of {k}: {weeks[k].investigations}" for k in keys)
    return (
        f'<svg role="img" aria-label="Investigations per week. {e(alt)}" width="{width}" '
        f'height="{height + 40}" '
        f'viewBox="0 0 {width} {height + 40}" xmlns="http://www.w3.org/2000/svg">'
        f'<text x="0" y="12" font-size="10">{top}</text>{"".join(parts)}</svg>'
        '<p class="muted">Green answered, amber refused, red failed.</p>'
    )


def _table(title: str, slices: Mapping[str, Slice]) -> str:
    rows = "".join(
        f"<tr><th scope=row>{e(name)}</th><td>{s.investigations}</td>"
        f"<td>{_pct(s.status.get('answered', 0), s.investigations)}</td>"
        f"<td>{_pct(s.status.get('refused', 0), s.investigations)}</td>"
        f"<td>{_pct(s.status.get('failed', 0), s.investigations)}</td>"
        + "".join(
            f"<td>{_pct(s.ratings.get(r, 0), sum(s.ratings.values()))}</td>"
            for r in ("helpful", "partly", "wrong")
        )
        + "".join(
            f"<td>{_pct(s.drafts.get(d, 0), sum(s.drafts.values()))}</td>"
            for d in ("unchanged", "edited", "unused")
        )
        + f"<td>{_pct(s.reopened, s.followed)}</td></tr>"
        for name, s in sorted(slices.items())
    )
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in (
            title,
            "Investigations",
            "Answered",
            "Refused",
            "Failed",
            "Helpful",
            "Partly",
            "Wrong",
            "Sent unchanged",
            "Edited",
            "Unused",
            "Reopened",
        )
    )
    return f'<table class="stack"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} s"


def quality_page(tenant_name: str, report: QualityReport, days: int, *, csrf: str | None = None) -> str:
    t = report.total
    rated = sum(t.ratings.values())
    latency = report.latency.get("all", {})
    dead = sum(v.get("dead", 0) for v in report.deliveries.values())
    sent = sum(sum(v.values()) for v in report.deliveries.values())
    ratio = "—" if report.edit_ratio_mean is None else f"{report.edit_ratio_mean:.0%}"
    facts = (
        f"<li><strong>{t.investigations}</strong> investigations</li>"
        f"<li>answered {_pct(t.status.get('answered', 0), t.investigations)}, refused "
        f"{_pct(t.status.get('refused', 0), t.investigations)}, failed "
        f"{_pct(t.status.get('failed', 0), t.investigations)}</li>"
        f"<li>{rated} rated: helpful {_pct(t.ratings.get('helpful', 0), rated)}, partly "
        f"{_pct(t.ratings.get('partly', 0), rated)}, wrong {_pct(t.ratings.get('wrong', 0), rated)}</li>"
        f"<li>drafts: unchanged {t.drafts.get('unchanged', 0)}, edited {t.drafts.get('edited', 0)} "
        f"(mean edit ratio {ratio}), unused {t.drafts.get('unused', 0)}; reopened "
        f"{_pct(t.reopened, t.followed)}</li>"
        f"<li>latency p50 {_seconds(latency.get('p50'))}, p95 {_seconds(latency.get('p95'))}</li>"
        f"<li>tools: {report.tools.get('calls', 0)} calls, {report.tools.get('errors', 0)} errors, "
        f"{report.tools.get('refused', 0)} refused; deliveries: {sent}, dead {dead}</li>"
    )
    periods = "".join(
        f'<li><a href="/quality?days={d}"{" aria-current=page" if d == days else ""}>{d} days</a></li>'
        for d in (7, 30, 90)
    )
    body = (f"<h1>Quality of {e(tenant_name)}</h1>"
            f'<nav aria-label="Period"><ul class="filters">{periods}'
            f'<li><a href="/quality.csv?days={days}">CSV</a></li>'
            f'<li><a href="/gaps?days={days}">Knowledge gaps</a></li></ul></nav>'
            f'<section class="card"><h2>Last {days} days</h2><ul class="facts">{facts}</ul></section>'
            f'<section class="card"><h2>Volume per week</h2>{weekly_chart(report.weeks)}</section>'
            f'<section class="card"><h2>By route</h2>{_table("Route", report.routes)}</section>'
            f'<section class="card"><h2>By audience</h2>{_table("Audience", report.audiences)}</section>')
    return layout("Quality", body, csrf=csrf)


def quality_csv(report: QualityReport) -> str:
    """One row per week, route and audience, and the total: the counts behind the page."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(("dimension", "value", *COLUMNS))
    groups = (("week", report.weeks), ("route", report.routes), ("audience", report.audiences),
              ("total", {"all": report.total}))
    for dimension, slices in groups:
        for name, piece in sorted(slices.items()):
            row = piece.row()
            writer.writerow((dimension, name, *(row[c] for c in COLUMNS)))
    return out.getvalue()
