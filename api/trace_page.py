"""The trace page: a summary a support lead reads in ten seconds (the answer, why it stopped, where each
citation came from, what was searched per hop, what was missing), then every detail collapsed below.

Every piece of text is escaped (documents and questions are untrusted). The only script is the
server's own `console.js`, loaded while the investigation runs, for live updates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from api.pages import csrf_field, e, layout
from investigation.state import Status

_MARKER = re.compile(r"\[(\d+)\]")
_TERMINAL = tuple(s.value for s in Status if s.terminal)  # from the one definition
# Why the loop stopped, in words a support lead uses.
STOP_WORDS = {
    "sufficient": "The evidence covered the question, so it stopped searching and answered.",
    "hop_cap": "It used every search round it was allowed (the hop budget) before the evidence was complete.",
    "retrieval_budget": "It ran out of search calls (the retrieval budget).",
    "token_budget": "It ran out of LLM tokens (the token budget).",
    "llm_unavailable": "The LLM could not be reached; the offline reasoner finished or it failed.",
    "no_new_evidence": "Another search round would have found nothing new.",
    "deadline": "It ran out of time (the deadline passed).",
    "unanswerable": "The knowledge base does not hold the answer, so it refused rather than guess.",
    "direct": "A greeting or chit-chat: answered without searching.",
    "single_shot": "Single-shot mode: one search round only.",
    "error": "Something broke; see the error below.",
}


def _grade_css(grade: Any) -> str:
    return grade if grade in ("correct", "ambiguous", "incorrect") else ""


def _value(value: Any) -> str:
    if isinstance(value, Mapping):
        if not value:
            return '<span class="muted">—</span>'
        return "<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{_value(v)}</dd>" for k, v in value.items()) + "</dl>"
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if not value:
            return '<span class="muted">none</span>'
        if all(isinstance(v, Mapping) for v in value):
            return "<ul>" + "".join(f"<li>{_value(v)}</li>" for v in value) + "</ul>"
        return ", ".join(f"<code>{e(v)}</code>" for v in value)
    if isinstance(value, float):
        return e(f"{value:g}")
    return '<span class="muted">—</span>' if value is None else e(value)


def _event(event: Mapping[str, Any]) -> str:
    kind = str(event.get("kind", ""))
    data = event.get("data") or {}
    css = re.sub(r"[^a-z_-]", "", kind.lower())
    items = "".join(f"<dt>{e(k)}</dt><dd>{_value(v)}</dd>" for k, v in data.items())
    return (
        f'<div class="ev {css}"><strong>{e(kind)}</strong> '
        f'<span class="muted">#{e(event.get("id"))} {e(event.get("at") or "")}</span><dl>{items}</dl></div>'
    )


def _answer(view: Mapping[str, Any]) -> str:
    answer = view.get("answer")
    if not answer:
        if view.get("status") in _TERMINAL:
            return f'<p class="answer muted">No answer. {e(view.get("error") or "")}</p>'
        return '<p class="answer muted">Still investigating…</p>'
    by_marker = {str(c.get("marker")): c for c in view.get("citations") or []}

    def link(match: re.Match[str]) -> str:
        cited = by_marker.get(match.group(1))
        if cited is None:
            return match.group(0)
        return f'<a href="#cite-{e(match.group(1))}">[{e(match.group(1))}]</a>'

    caveat = f'<p><strong>Caveat:</strong> {e(view["caveat"])}</p>' if view.get("caveat") else ""
    return f'<p class="answer">{_MARKER.sub(link, e(answer))}</p>{caveat}'


def _why(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
    reason = view.get("stop_reason")
    if not reason:
        return '<p class="why">Not stopped yet.</p>'
    last = next((ev for ev in reversed(events) if ev.get("kind") == "decision"), None)
    detail = (last or {}).get("data", {}).get("detail") if last else None
    text = STOP_WORDS.get(str(reason), str(reason))
    extra = f' <span class="muted">({e(detail)})</span>' if detail else ""
    error = f'<br><strong>Error:</strong> {e(view["error"])}' if view.get("error") else ""
    return (f'<p class="why"><strong>Why it stopped:</strong> {e(text)} <code>{e(reason)}</code>'
            f"{extra}{error}</p>")


def _sources(view: Mapping[str, Any]) -> str:
    citations = view.get("citations") or []
    if not citations:
        return '<p class="muted">No citations.</p>'
    evidence = {str(ev.get("id")): ev for ev in view.get("evidence") or []}
    items = []
    for c in citations:
        ev = evidence.get(str(c.get("evidence_id")), {})
        snippet = " ".join(str(ev.get("text") or "").split())[:220]
        items.append(
            f'<li id="cite-{e(c.get("marker"))}" '
            f'value="{e(c.get("marker"))}"><strong>{e(c.get("title"))}</strong> '
            f'<span class="muted">({e(c.get("source_id"))})</span><br>'
            f'<span class="muted">hop {e(ev.get("hop", "?"))} · found by “{e(ev.get("query", "?"))}” · '
            'graded '
            f'<span class="{_grade_css(ev.get("grade"))}">{e(ev.get("grade", "?"))}</span> · evidence '
            f'<a href="#ev-{e(c.get("evidence_id"))}">{e(c.get("evidence_id"))}</a></span>'
            f'<br><span class="snippet">{e(snippet)}{"…" if snippet else ""}</span></li>'
        )
    return f'<ol class="sources">{"".join(items)}</ol>'


def _searched(events: Sequence[Mapping[str, Any]]) -> str:
    """One row per hop: its queries, what each engine found, the grades, and the decision taken."""
    hops: dict[int, dict[str, Any]] = {}
    for ev in events:
        hop, data = int(ev.get("hop") or 0), ev.get("data") or {}
        row = hops.setdefault(hop, {"queries": [], "found": {}, "errors": [], "grades": {}, "decision": None})
        kind = ev.get("kind")
        if kind == "hop":
            row["queries"] = list(data.get("queries") or [])
        elif kind == "retrieval":
            engine = str(data.get("engine"))
            row["found"][engine] = row["found"].get(engine, 0) + len(data.get("ids") or [])
            if data.get("error"):
                row["errors"].append(f"{engine}: {data['error']}")
        elif kind == "grades":
            for g in data.get("grades") or []:
                row["grades"][g.get("grade")] = row["grades"].get(g.get("grade"), 0) + 1
        elif kind == "decision":
            row["decision"] = data
    rows = []
    for hop in sorted(h for h in hops if h > 0):
        row = hops[hop]
        found = ", ".join(f"{k} {v}" for k, v in row["found"].items()) or "—"
        grades = ", ".join(
            f'<span class="{_grade_css(k)}">{v} {e(k)}</span>' for k, v in row["grades"].items()
        )
        decision = row["decision"] or {}
        nxt = decision.get("next_queries") or []
        decided = (f'{e(decision.get("action"))} ({e(decision.get("reason"))})' if decision else "—") + (
            f'<br><span class="muted">next: {e(" | ".join(nxt))}</span>' if nxt else "")
        errors = f'<br><span class="incorrect">{e("; ".join(row["errors"]))}</span>' if row["errors"] else ""
        queries = "<br>".join(f"“{e(q)}”" for q in row["queries"]) or "—"
        rows.append(
            f'<tr><td data-label="Hop">{hop}</td><td data-label="Searched for">{queries}</td>'
            f'<td data-label="Hits">{e(found)}{errors}</td><td data-label="New '
            f'evidence">{grades or "none"}</td>'
            f'<td data-label="Then">{decided}</td></tr>'
        )
    if not rows:
        return '<p class="muted">Nothing was searched.</p>'
    return ('<table class="stack"><thead><tr><th scope="col">Hop</th><th scope="col">Searched for</th>'
            '<th scope="col">Hits per engine</th><th scope="col">New evidence</th><th scope="col">Then</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _missing(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
    judgment = next((ev.get("data") or {} for ev in reversed(events) if ev.get("kind") == "judgment"), None)
    items = []
    if judgment:
        items += [f"Not found: {m}" for m in judgment.get("missing_information") or []]
        items += [f"No evidence mentions “{a}”" for a in judgment.get("absent") or []
                  if not any(str(a) in i for i in items)]
        items += [f"Conflict: {c}" for c in judgment.get("conflicts") or []]
    items += [f"{ev['data'].get('engine')} failed: {ev['data'].get('error')}" for ev in events
              if ev.get("kind") == "retrieval" and (ev.get("data") or {}).get("error")]
    if not items:
        if view.get("status") == "answered":
            return '<p class="muted">Nothing: the evidence covered the question.</p>'
        return '<p class="muted">Nothing recorded.</p>'
    return "<ul>" + "".join(f"<li>{e(i)}</li>" for i in items) + "</ul>"


def _attempts(delivery_id: Any, events: Sequence[Mapping[str, Any]]) -> str:
    """Every attempt of one delivery from its trace events: status code / SMTP reply, detail, latency."""
    lines = []
    for ev in events:
        data = ev.get("data") or {}
        if ev.get("kind") != "delivery" or data.get("delivery_id") != delivery_id:
            continue
        said = data.get("error") or data.get("detail") or ""
        lines.append(f'<li>attempt {e(data.get("attempt"))}: {e(data.get("outcome"))}'
                     f'{" · " + e(data.get("status_code")) if data.get("status_code") is not None else ""}'
                     f'{" · " + e(said) if said else ""} · {e(data.get("duration_ms"))} ms</li>')
    return f'<ul class="muted">{"".join(lines)}</ul>' if lines else ""


def _deliveries(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]] = (), *,
                actions: bool = True, csrf: str | None = None) -> str:
    """Each delivery's state and attempts; a Redeliver button on dead ones when the visitor may act."""
    rows = view.get("deliveries") or []
    if not rows:
        return ""
    items = []
    for d in rows:
        button = ""
        if d.get("status") == "dead" and actions:
            button = (
                f' <form method="post" action="/console/deliveries/{e(d.get("id"))}/redeliver" '
                f'class="inline">{csrf_field(csrf)}<button class="action" type="submit">Redeliver</button>'
                "</form>"
            )
        items.append(
            f'<li>{e(d.get("channel"))}: <span class="badge {e(d.get("status"))}">{e(d.get("status"))}'
            f"</span> after {e(d.get('attempts'))} attempt(s){button}{_attempts(d.get('id'), events)}</li>"
        )
    return f'<h3>Delivery</h3><ul>{"".join(items)}</ul>'


def _details(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
    by_hop: dict[int, list[str]] = {}
    for ev in events:
        by_hop.setdefault(int(ev.get("hop") or 0), []).append(_event(ev))
    parts = []
    for hop in sorted(by_hop):
        title = (
            "Intake, routing, synthesis and delivery"
            if hop == 0
            else f"Hop {hop}: retrievals, grades, decision"
        )
        parts.append(
            f"<details><summary>{e(title)} ({len(by_hop[hop])} events)</summary>{''.join(by_hop[hop])}"
            "</details>"
        )
    evidence = view.get("evidence") or []
    cards = "".join(
        f'<div class="ev" id="ev-{e(ev.get("id"))}"><strong>{e(ev.get("id"))}</strong> '
        f'<span class="{_grade_css(ev.get("grade"))}">{e(ev.get("grade"))}</span> '
        f'<span class="muted">hop {e(ev.get("hop"))} · score {_value(ev.get("score"))} · '
        f'{e(ev.get("source_id"))} · '
        f"query “{e(ev.get('query'))}”</span><div><strong>{e(ev.get('title'))}</strong></div>"
        f'<p class="question">{e(ev.get("text"))}</p></div>'
        for ev in evidence
    )
    parts.append(f"<details><summary>Evidence ({len(evidence)})</summary>{cards or '<p>none</p>'}</details>")
    parts.append("<details><summary>Raw JSON</summary>"
                 f"<pre>{e(json.dumps(view, indent=1, default=str))}</pre></details>")
    return "".join(parts)


def render(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]], question: str, *,
           csrf: str | None = None, full: bool = True, feedback: str = "") -> str:
    """The whole page for one investigation; `full` False for a link's read-only session (no actions, no
    list page); `feedback` its ratings and rating links, already rendered."""
    status = str(view.get("status"))
    running = status not in _TERMINAL
    facts = [
        f'<li><span class="badge {e(status)}">{e(status)}</span></li>',
        f"<li>route <strong>{e(view.get('route') or '—')}</strong></li>",
        f"<li>{e(view.get('hops'))} hop(s)</li>",
        f"<li>{e(view.get('retrieval_calls'))} search calls</li>",
        f"<li>{e(view.get('evidence_tokens'))} evidence tokens</li>",
    ]
    live = ""
    if running:
        live = ('<section class="card" aria-labelledby="live-h"><h2 id="live-h">Live</h2>'
                '<p id="live-status" role="status">Running: new steps appear here as they happen.</p>'
                '<ol id="live-events" aria-live="polite"></ol></section>')
    body = (
        f'<div{" data-live=" + chr(34) + e(view.get("id")) + chr(34) if running else ""}>'
        f'<h1>Investigation <code>{e(str(view.get("id"))[:12])}…</code></h1>'
        f'<p class="question" aria-label="Question">{e(question)}</p>'
        f'<section class="card" id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>'
        f'<ul class="facts">{"".join(facts)}</ul>'
        f"{_answer(view)}{_why(view, events)}"
        f"<h3>Where each citation comes from</h3>{_sources(view)}"
        f"<h3>What was searched</h3>{_searched(events)}"
        f"<h3>What was missing</h3>{_missing(view, events)}"
        f"{_deliveries(view, events, actions=full, csrf=csrf)}</section>{feedback}{live}"
        f'<h2 id="details-h">Details</h2>{_details(view, events)}</div>'
    )
    return layout(f"Trace {str(view.get('id'))[:12]}", body, script=running, csrf=csrf, full=full)
