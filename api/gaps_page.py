"""The knowledge-gaps page of one tenant: the topics of the questions that were refused, rated wrong or
answered partly, biggest first, each with its most typical question, frequent terms, count, trend against the
period
before and links to the investigations (everything shown escaped)."""

from __future__ import annotations

from api.pages import e, layout
from app.gaps import Gap, GapReport

PERIODS = (7, 30, 90)
REASONS = {"refused": "refused", "wrong": "rated wrong", "partly": "rated partly"}


def _trend(gap: Gap, days: int) -> str:
    if gap.trend == "new":
        return f"new (none in the {days} days before)"
    word = "same as" if gap.trend == "same" else ("up from" if gap.count > gap.previous else "down from")
    return f"{word} {gap.previous} in the {days} days before"


def _questions(gap: Gap) -> str:
    rows = "".join(
        f'<li><a href="/trace/{e(q.id)}">{e(q.question)}</a> '
        f'<span class="muted">{q.created_at:%Y-%m-%d} · {e(REASONS.get(q.reason, q.reason))}</span></li>'
        for q in gap.questions
    )
    return f"<details><summary>The {gap.count} investigations</summary><ul>{rows}</ul></details>"


def _card(gap: Gap, days: int) -> str:
    reasons = ", ".join(f"{REASONS.get(k, k)} {v}" for k, v in sorted(gap.reasons.items()))
    terms = ", ".join(gap.terms) or "—"
    return (
        f'<section class="card gap"><h2><a href="/trace/{e(gap.label.id)}">{e(gap.label.question)}</a></h2>'
        f'<ul class="facts"><li><strong>{gap.count}</strong> question{"s" if gap.count != 1 else ""}</li>'
        f"<li>{e(_trend(gap, days))}</li><li>{e(reasons)}</li><li>terms: {e(terms)}</li></ul>"
        f"{_questions(gap)}</section>"
    )


def gaps_page(tenant_name: str, report: GapReport, days: int, *, csrf: str | None = None) -> str:
    periods = "".join(
        f'<li><a href="/gaps?days={d}"{" aria-current=page" if d == days else ""}>{d} days</a></li>'
        for d in PERIODS
    )
    topics = [g for g in report.gaps if g.count > 1]
    once = [g for g in report.gaps if g.count == 1]
    summary = (f"{report.questions} questions refused, rated wrong or partly in the last {days} days "
               f"({report.previous} in the {days} days before), in {len(report.gaps)} topics.")
    if report.truncated:
        summary += " Only the newest questions were grouped; `sleuth gaps --limit` takes more."
    body = (f"<h1>Knowledge gaps of {e(tenant_name)}</h1>"
            f'<nav aria-label="Period"><ul class="filters">{periods}'
            f'<li><a href="/quality?days={days}">Quality</a></li></ul></nav>'
            f"<p>{e(summary)} What the knowledge base should answer next, biggest topic first.</p>")
    if not report.gaps:
        body += '<p class="muted">Nothing was refused or rated wrong or partly in this period.</p>'
    body += "".join(_card(g, days) for g in topics)
    if once:
        rows = "".join(f'<li><a href="/trace/{e(g.label.id)}">{e(g.label.question)}</a> '
                       f'<span class="muted">{e(REASONS.get(g.label.reason, g.label.reason))}</span></li>'
                       for g in once)
        body += (
            f'<section class="card"><h2>Asked once</h2><details><summary>{len(once)} questions on topics of '
            f"their own</summary><ul>{rows}</ul></details></section>"
        )
    return layout("Knowledge gaps", body, csrf=csrf)
