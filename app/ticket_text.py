"""Ticket text → question text: HTML stripped to text, quoted replies and signatures trimmed.

Ticket text is untrusted input: nothing here interprets it, it only keeps what the customer wrote.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

_BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table"}
_SKIP = {"script", "style", "head", "title", "template", "noscript"}
_QUOTE_HEADER = re.compile(
    r"^(on\b.{0,200}\bwrote:|-{2,}\s*original message\s*-{2,}|from:\s.+|_{10,}|"
    r"le\b.{0,200}\ba écrit\s?:|am\b.{0,200}\bschrieb\b.*:)\s*$", re.IGNORECASE)
_SIGNATURE = re.compile(r"^(--\s?|sent from my \w+.*|get outlook for \w+.*)$", re.IGNORECASE)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.quoting = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skipping += 1
        if tag == "blockquote":
            self.quoting += 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self.skipping:
            self.skipping -= 1
        if tag == "blockquote" and self.quoting:
            self.quoting -= 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping and not self.quoting:  # quoted replies in <blockquote> are dropped
            self.parts.append(data)


def html_to_text(value: str) -> str:
    """Visible text of an HTML fragment (plain text passes through, entities decoded)."""
    if "<" not in value:
        return html.unescape(value)
    parser = _Text()
    parser.feed(value)
    parser.close()
    return "".join(parser.parts)


def trim_reply(text: str) -> str:
    """Drop quoted replies (``>`` lines, "On … wrote:" and what follows) and a trailing signature."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if _QUOTE_HEADER.match(stripped) or _SIGNATURE.match(stripped):
            break
        if stripped.startswith(">"):
            continue
        kept.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def ticket_question(subject: str | None, description: str | None) -> str:
    """The question an investigation gets from a ticket: subject, then the cleaned description."""
    subject_text = " ".join(html_to_text(subject or "").split())
    body = trim_reply(html_to_text(description or ""))
    body = "\n".join(" ".join(line.split()) for line in body.split("\n")).strip()
    if subject_text and body.lower().startswith(subject_text.lower()):
        return body
    return f"{subject_text}\n\n{body}".strip() if body else subject_text


__all__ = ["html_to_text", "ticket_question", "trim_reply"]
