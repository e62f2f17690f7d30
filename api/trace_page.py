"""The HTML trace page: one self-contained document explaining how an answer came about.

Every piece of text is escaped (documents and questions are untrusted) and the page carries no script;
the route serves it with a Content-Security-Policy that forbids scripts anyway.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#222}
h1{font-size:1.3rem} h2{font-size:1.1rem;margin-top:2rem;border-bottom:1px solid #ddd}
.q{white-space:pre-wrap;background:#f6f6f6;padding:.6rem;border-radius:4px}
.ev{border-left:3px solid #bbb;margin:.5rem 0;padding:.2rem .8rem}
.ev.decision,.ev.stop{border-color:#c60} .ev.retrieval{border-color:#36c} .ev.grades{border-color:#393}
.ev.delivery{border-color:#939} .kind{font-weight:600} .muted{color:#777}
table{border-collapse:collapse;margin:.3rem 0} td,th{border:1px solid #ddd;padding:.15rem .4rem;
vertical-align:top;text-align:left} dl{margin:.2rem 0} dt{float:left;clear:left;width:11rem;color:#555}
dd{margin-left:11.5rem} .answer{white-space:pre-wrap} .correct{color:#393} .ambiguous{color:#a70}
.incorrect{color:#c33} code{font-size:.92em}
"""

_MARKER = re.compile(r"\[(\d+)\]")


def _e(value: Any) -> str:
    """Escape anything for HTML text and attribute positions."""
    return escape("" if value is None else str(value), quote=True)


def _value(value: Any) -> str:
    """A data value as escaped HTML: scalars inline, lists of dicts as a table, other lists inline."""
    if isinstance(value, Mapping):
        if not value:
            return '<span class="muted">—</span>'
        return "<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_value(v)}</dd>" for k, v in value.items()) + "</dl>"
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if not value:
            return '<span class="muted">none</span>'
        if all(isinstance(v, Mapping) for v in value):
            return _table(value)
        return ", ".join(f"<code>{_e(v)}</code>" for v in value)
    if isinstance(value, float):
        return _e(f"{value:g}")
    if value is None:
        return '<span class="muted">—</span>'
    return _e(value)


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in columns:
            cell = row.get(c)
            css = f' class="{_e(cell)}"' if c == "grade" and isinstance(cell, str) else ""
            cells.append(f"<td{css}>{_value(cell) if isinstance(cell, list | dict) else _e(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _event(event: Mapping[str, Any]) -> str:
    kind = str(event.get("kind", ""))
    data = event.get("data") or {}
    css = re.sub(r"[^a-z_-]", "", kind.lower())
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_value(v)}</dd>" for k, v in data.items())
    at = f' <span class="muted">{_e(event.get("at"))}</span>' if event.get("at") else ""
    return (f'<div class="ev {css}"><span class="kind">{_e(kind)}</span> '
            f'<span class="muted">#{_e(event.get("id"))} {_e(event.get("step_key", ""))}</span>{at}'
            f"<dl>{items}</dl></div>")


def _answer(view: Mapping[str, Any]) -> str:
    answer = view.get("answer")
    if not answer:
        return '<p class="muted">No answer (yet).</p>'
    by_marker = {str(c.get("marker")): c for c in view.get("citations") or []}

    def link(match: re.Match[str]) -> str:
        cited = by_marker.get(match.group(1))
        if cited is None:
            return match.group(0)
        return f'<a href="#ev-{_e(cited.get("evidence_id"))}">[{_e(match.group(1))}]</a>'

    text = _MARKER.sub(link, _e(answer))
    rows = [{"marker": c.get("marker"), "evidence": c.get("evidence_id"), "source": c.get("source_id"),
             "title": c.get("title")} for c in view.get("citations") or []]
    caveat = f'<p><b>Caveat:</b> {_e(view["caveat"])}</p>' if view.get("caveat") else ""
    return f'<div class="answer">{text}</div>{caveat}' + (_table(rows) if rows else "")


def _evidence(view: Mapping[str, Any]) -> str:
    items = view.get("evidence") or []
    if not items:
        return '<p class="muted">No evidence kept.</p>'
    out = []
    for ev in items:
        out.append(
            f'<div class="ev" id="ev-{_e(ev.get("id"))}"><span class="kind">{_e(ev.get("id"))}</span> '
            f'<span class="{_e(ev.get("grade"))}">{_e(ev.get("grade"))}</span> '
            f'<span class="muted">hop {_e(ev.get("hop"))} · score {_value(ev.get("score"))} · '
            f'source {_e(ev.get("source_id"))} · query “{_e(ev.get("query"))}”</span>'
            f'<div><b>{_e(ev.get("title"))}</b></div><div class="q">{_e(ev.get("text"))}</div></div>')
    return "".join(out)


# Events that close an investigation, shown after the hops whatever hop number they carry.
_OUTCOME_KINDS = frozenset({"synthesis", "stop", "delivery"})


def render(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]], question: str) -> str:
    """The whole page for one investigation: question, route, hops with their events, answer, evidence."""
    hops: dict[int, list[str]] = {}
    outcome: list[str] = []
    for event in events:
        if event.get("kind") in _OUTCOME_KINDS:
            outcome.append(_event(event))
        else:
            hops.setdefault(int(event.get("hop") or 0), []).append(_event(event))
    sections = []
    for hop in sorted(hops):
        title = "Intake, routing and planning" if hop == 0 else f"Hop {hop}"
        sections.append(f"<h2>{_e(title)}</h2>{''.join(hops[hop])}")
    if outcome:
        sections.append(f"<h2>Outcome: synthesis and delivery</h2>{''.join(outcome)}")
    summary = {k: view.get(k) for k in ("status", "route", "stop_reason", "hops", "retrieval_calls", "error")
               if view.get(k) is not None}
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>Trace {_e(view.get('id'))}</title><style>{_CSS}</style></head><body>"
        f"<h1>Investigation <code>{_e(view.get('id'))}</code></h1>"
        f'<div class="q">{_e(question)}</div>{_value(summary)}'
        f"<h2>Answer</h2>{_answer(view)}"
        f"{''.join(sections)}"
        f"<h2>Evidence</h2>{_evidence(view)}"
        f'<h2>Raw view</h2><details><summary>JSON</summary><pre>{_e(json.dumps(view, indent=1, default=str))}'
        "</pre></details></body></html>"
    )
