"""HTML article bodies as plain text (paragraphs kept), tolerant of broken markup: the standard library's
parser never raises on bad HTML, which is what helpdesk editors produce."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCKS = frozenset(
    (
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "table",
        "pre",
        "blockquote",
        "section",
        "article",
        "hr",
        "dd",
        "dt",
    )
)
_SKIP = frozenset(("script", "style", "noscript", "template", "svg", "head"))
_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLANKS = re.compile(r"\n\s*\n+")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """The readable text of an HTML fragment or page: paragraphs separated by blank lines."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(parser.parts).split("\n"))
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()
