"""Turning an investigation view and its trace into text for a terminal."""

from __future__ import annotations

from typing import Any


def progress_line(event: dict[str, Any]) -> str | None:
    """One human line per interesting trace event (None for the rest)."""
    kind, data, hop = event["kind"], event.get("data", {}), event.get("hop", 0)
    if kind == "route":
        return f"route: {data.get('route')} ({data.get('reason')})"
    if kind == "hop":
        queries = ", ".join(repr(q) for q in data.get("queries", []))
        return f"hop {hop}: searching {queries} …"
    if kind == "decision":
        nxt = data.get("next_queries") or []
        tail = f" → next: {', '.join(repr(q) for q in nxt)}" if nxt else ""
        return f"hop {hop}: {data.get('action')} ({data.get('reason')}){tail}"
    if kind == "synthesis":
        return f"synthesis: {data.get('status')}"
    if kind == "llm_call":
        return (f"llm: {data.get('step')} on {data.get('model')} "
                f"({data.get('input_tokens')} in / {data.get('output_tokens')} out)")
    if kind in ("llm_fallback", "llm_guard"):
        return f"{kind.replace('_', ' ')}: {data.get('reason') or data.get('detail') or ''}".rstrip(": ")
    if kind == "delivery":
        said = data.get("detail") or data.get("error") or ""
        return (f"delivery: {data.get('channel', 'webhook')} attempt {data.get('attempt')} → "
                f"{data.get('outcome') or data.get('status')}" + (f" ({said})" if said else ""))
    return None


def trace_summary(view: dict[str, Any]) -> str:
    return (
        f"route={view.get('route')} hops={view.get('hops')} retrieval_calls={view.get('retrieval_calls')} "
        f"evidence_tokens={view.get('evidence_tokens')} stop={view.get('stop_reason')} "
        f"status={view.get('status')}"
    )


def answer_block(view: dict[str, Any]) -> str:
    lines = [view.get("answer") or f"(no answer: {view.get('error') or view.get('status')})"]
    if view.get("caveat"):
        lines.append(f"Caveat: {view['caveat']}")
    citations = view.get("citations") or []
    if citations:
        lines.append("Sources:")
        for c in citations:
            internal = " — internal" if c.get("internal") else ""
            lines.append(f"  [{c['marker']}] {c['title']} ({c['source_id']}){internal}")
    return "\n".join(lines)
