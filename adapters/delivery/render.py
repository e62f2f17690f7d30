"""An investigation's answer as people read it: plain text and HTML for e-mail and helpdesk notes.

Numbered citations become footnotes (title, and the URL when the document has one); a refusal or a
failure is worded so an agent can forward it; a one-line "how this was found" and, when a public URL
is configured, a link to the trace and the three rating links (helpful, partly, wrong). Every rendering
ends with the delivery's reference (``Sleuth ref <delivery id>``), which is how a helpdesk note is
recognised on a retry.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

REFERENCE_PREFIX = "Sleuth ref"
SUBJECT_CHARS = 90


def reference(delivery_id: str) -> str:
    """The visible reference of a delivery, e.g. ``Sleuth ref msg_3f…``."""
    return f"{REFERENCE_PREFIX} {delivery_id}"


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str
    outcome: str  # answered | refused | failed


def outcome_of(payload: dict[str, Any]) -> str:
    status = str(payload.get("status") or "failed")
    return status if status in ("answered", "refused") else "failed"


def _lead(payload: dict[str, Any], outcome: str) -> str:
    if outcome == "answered":
        return str(payload.get("answer") or "").strip()
    if outcome == "refused":
        return ("Sleuth found no reliable answer to this question in the knowledge base, so it did not "
                "guess. A person should look at it.")
    reason = str(payload.get("stop_reason") or "error").replace("_", " ")
    return (f"Sleuth could not finish this investigation ({reason}). Nothing was concluded; "
            "a person should look at it.")


def _how(payload: dict[str, Any]) -> str:
    hops = int(payload.get("hops") or 0)
    sources = len({e.get("source_id") for e in payload.get("evidence") or [] if e.get("source_id")})
    searches = int(payload.get("retrieval_calls") or 0)
    route = str(payload.get("route") or "unrouted").replace("_", "-")
    return (f"How this was found: {route} route, {hops} hop{'s' if hops != 1 else ''}, "
            f"{sources} source{'s' if sources != 1 else ''} examined in {searches} "
            f"search{'es' if searches != 1 else ''}.")


def linkable(url: str | None) -> bool:
    """Whether `url` may become a link in HTML: only http and https (a document's URL is the tenant's data;
    a ``javascript:`` or ``data:`` one would run or show something in the reader's mail or helpdesk)."""
    scheme, colon, _ = (url or "").strip().partition(":")
    return bool(colon) and scheme.lower() in ("http", "https")


def _footnotes(payload: dict[str, Any]) -> list[tuple[int, str, str | None]]:
    notes = []
    for c in payload.get("citations") or []:
        try:
            marker = int(c.get("marker"))
        except (TypeError, ValueError):
            continue
        url = c.get("url")
        notes.append(
            (marker, str(c.get("title") or c.get("source_id") or "source"), str(url) if url else None)
        )
    return sorted(notes)


def _note(title: str, url: str | None) -> str:
    """A footnote's HTML: a link for an http(s) URL, else the title and the URL as text."""
    e = html.escape
    if url and linkable(url):
        return f'<a href="{e(url.strip(), quote=True)}">{e(title)}</a>'
    return e(title) + (f" — {e(url)}" if url else "")


RATING_WORDS = (("helpful", "Helpful"), ("partly", "Partly"), ("wrong", "Wrong"))


def rating_links(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """The payload's one-click rating links as (label, url), http(s) only; none without a public URL."""
    links = payload.get("feedback_links")
    if not isinstance(links, dict):
        return []
    return [(label, str(links[key])) for key, label in RATING_WORDS if linkable(links.get(key))]


def render(payload: dict[str, Any], *, delivery_id: str, trace_url: str | None = None) -> Rendered:
    """The subject, text and HTML of one delivery of `payload` (the public investigation view)."""
    outcome = outcome_of(payload)
    question = " ".join(str(payload.get("question") or "").split())
    prefix = {"answered": "Answer", "refused": "No answer found", "failed": "Could not answer"}[outcome]
    short = question if len(question) <= SUBJECT_CHARS else question[: SUBJECT_CHARS - 1].rstrip() + "…"
    subject = f"[Sleuth] {prefix}: {short}" if short else f"[Sleuth] {prefix}"
    lead = _lead(payload, outcome)
    caveat = str(payload.get("caveat") or "").strip()
    notes = _footnotes(payload)
    how = _how(payload)
    ref = reference(delivery_id)

    text = [lead, ""]
    if caveat:
        text += [f"Caveat: {caveat}", ""]
    if notes:
        text.append("Sources")
        text += [f"[{m}] {title}" + (f" — {url}" if url else "") for m, title, url in notes]
        text.append("")
    if question:
        text.append(f"Question: {question}")
    text.append(how)
    if trace_url:
        text.append(f"Trace: {trace_url}")
    rate = rating_links(payload)
    if rate:
        text += ["", "Was this answer right? Rate it:"] + [f"{label}: {url}" for label, url in rate]
    text += ["", ref]

    e = html.escape
    parts = [f"<p>{e(lead).replace(chr(10), '<br>')}</p>"]
    if caveat:
        parts.append(f"<p><strong>Caveat:</strong> {e(caveat)}</p>")
    if notes:
        items = "".join(f'<li value="{m}">{_note(title, url)}</li>' for m, title, url in notes)
        parts.append(f"<p><strong>Sources</strong></p><ol>{items}</ol>")
    meta = e(how)
    if trace_url and linkable(trace_url):
        meta += f' <a href="{e(trace_url, quote=True)}">See the trace</a>.'
    if question:
        meta = f"Question: {e(question)}<br>{meta}"
    parts.append(f"<p><small>{meta}</small></p>")
    if rate:
        buttons = " · ".join(f'<a href="{e(url, quote=True)}">{label}</a>' for label, url in rate)
        parts.append(f"<p>Was this answer right? {buttons}</p>")
    parts.append(f"<p><small>{e(ref)}</small></p>")
    return Rendered(
        subject=subject, text="\n".join(text).strip() + "\n", html="\n".join(parts), outcome=outcome
    )


__all__ = ["REFERENCE_PREFIX", "Rendered", "linkable", "outcome_of", "rating_links", "reference", "render"]
