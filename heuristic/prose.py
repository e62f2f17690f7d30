"""Reading evidence text as plain sentences ("units"): markdown headings, emphasis, lists, code and tables
are turned into sentences an extractive answer can quote, each remembering the section it sits in.

A table row becomes one sentence: "Team: Monthly uptime commitment 99.5%; Maximum service credit 10% …".
When the question names some of the table's columns ("Team vs Business"), only those columns are kept.
Plain prose (Wikipedia-style passages) comes out as its sentences, unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from investigation.memo import memoised
from investigation.text import TEXT_CACHE_SIZE, content_stems, fold, split_sentences, words

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_NUMBERING = re.compile(r"^(\d+(\.\d+)*\.?|[A-Z]\.)\s+")
_BOLD_ONLY = re.compile(r"^\*\*([^*]{1,60})\*\*:?$")
# A Q/A pair of an FAQ in one block: "Q: … ?" then "A: …".
_FAQ_PAIR = re.compile(r"^(Q:\s[^?]{1,300}\?)\s+(?=A:\s)")
_BOLD_LEAD = re.compile(r"^\*\*([^*]{1,160}?)[.:]?\*\*[.:]?\s+(?=\S)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1|(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])")
_CODE = re.compile(r"`([^`]*)`")
# HTML in a document is data: hidden elements and comments say nothing a reader sees, so they are dropped
# whole (a classic hiding place for injected instructions); other tags are stripped, keeping their text.
_HIDDEN_HTML = re.compile(
    r"<(\w+)\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|\shidden\b)[^>]*>.*?</\1\s*>",
    re.IGNORECASE | re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_HTML_TAGS = (
    "a|abbr|article|b|blockquote|br|button|center|code|details|div|em|font|footer|form|h[1-6]|header|hr|i|"
    "iframe|img|input|label|li|link|meta|ol|p|pre|section|small|span|strong|sub|summary|sup|table|tbody|"
    "td|th|thead|tr|u|ul"
)
# Only real HTML tags: placeholders such as <token> or <org-id> in documentation are text.
_TAG = re.compile(rf"</?(?:{_HTML_TAGS})\b[^>]*>", re.IGNORECASE)
_SCRIPT = re.compile(
    r"<(script|style|template|system|tool_use)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
# Tags that imitate the prompt's own fences or roles ("</passage>", "<system>") are never text a reader wants.
_FENCE_TAG = re.compile(
    r"</?\s*(?:passage|retrieved_passages|system|tool_use|assistant|user|human|question|draft)"
    r"\b[^>]*>",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```.*?(```|$)", re.DOTALL)
_SEPARATOR_CELL = re.compile(r"^:?-{3,}:?$")
_BULLET_START = re.compile(r"^[-*•]\s+")
_BULLET_SPLIT = re.compile(r"\s+[-*•]\s+(?=\S)")
_NUMBERED_SPLIT = re.compile(r"\s+(?=\d{1,2}\.\s+\S)")
_LONG_CELL_WORDS = 12
_SHORT_ROW_WORDS = 25  # a cell this short stays one sentence even when it holds several
_CELL_SENTENCE = re.compile(r"(?<=[a-z)])\.\s+(?=[A-Z$€£\d])(?<!\be\.g\.\s)(?<!\bi\.e\.\s)")
# "Requests per minute", "Runs per month"
_RATE_HEADER = re.compile(r"^[A-Z]?[a-z]+s\s+per\s+\w+", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^([$€£]?\d[\d,.]*)\s*(\([^)]*\))?$")  # "1,200", "300 (raised from 200 …)"


@dataclass(frozen=True)
class Unit:
    """One quotable sentence of a passage, with the heading (and bold label) it sits under."""

    text: str
    section: str = ""
    kind: str = "sentence"  # sentence | item | row


def strip_html(text: str) -> str:
    """Hidden HTML elements and comments dropped whole, other tags stripped (their text kept)."""
    if "<" not in text:  # every pattern below starts with it
        return text
    text = _SCRIPT.sub(" ", _HIDDEN_HTML.sub(" ", text))
    return _FENCE_TAG.sub(" ", _TAG.sub(" ", _HTML_COMMENT.sub(" ", text)))


@memoised(TEXT_CACHE_SIZE)  # table cells and list items repeat across passages and hops
def inline(text: str) -> str:
    """Markdown inline markup removed: links keep their text, emphasis and code marks go; hidden HTML and
    HTML comments are dropped, other tags stripped."""
    text = strip_html(text)
    if "](" in text:  # each pattern is searched only in a text holding a literal it cannot match without
        text = _LINK.sub(r"\1", text)
    if "`" in text:
        text = _CODE.sub(r"\1", text)
    if "*" in text or "__" in text:
        for _ in range(2):
            text = _EMPHASIS.sub(lambda m: m.group(2) or m.group(3) or "", text)
    if text.startswith(">"):
        text = re.sub(r"^>\s*", "", text)
    text = text.replace("**", "")
    return " ".join(text.split())


def _end(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?\"”')" else text + "."




def _split_rows(block: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a markdown table whose lines were joined by spaces ("| a | b | | c | d |")."""
    parts = [p.strip() for p in block.strip().strip("|").split("|")]
    separator = next((i for i, p in enumerate(parts) if _SEPARATOR_CELL.match(p)), -1)
    rows: list[list[str]] = []
    current: list[str] = []
    if separator < 0:  # a table cut by chunking: no header, rows still end at the "| |" gaps
        for cell in parts + [""]:
            if cell:
                current.append(cell)
            elif current:
                rows.append(current)
                current = []
        return [], [[inline(c) for c in row] for row in rows]
    width = 0
    while separator + width < len(parts) and _SEPARATOR_CELL.match(parts[separator + width]):
        width += 1
    header = [p for p in parts[:separator] if p][-width:]
    rest = parts[separator + width:]
    for cell in rest:
        if not cell and not current:
            continue  # the gap between two rows ("… | | …")
        current.append(cell)
        if len(current) == width:
            rows.append(current)
            current = []
    if any(current):
        rows.append(current)
    return [inline(h) for h in header], [[inline(c) for c in row] for row in rows if any(row)]


def _keep_columns(header: list[str], question: str) -> list[int]:
    """Indexes of the value columns to show: those the question names, or all of them."""
    if not question or len(header) < 3:
        return list(range(1, len(header)))
    # Only columns the question names as names ("Team vs Business"), written as the header writes them.
    named = [i for i in range(1, len(header)) if header[i][:1].isupper()
             and re.search(r"(?<![\w-])" + re.escape(header[i]) + r"(?![\w-])", question)]
    return named if 0 < len(named) < len(header) - 1 else list(range(1, len(header)))


def render_row(header: list[str], row: list[str], label: str = "", question: str = "") -> str:
    """One table row as a sentence; long cells speak for themselves, short ones get their column name."""
    if not header:
        cells = [c for c in row if c]
        return _end(f"{cells[0]}: {'; '.join(cells[1:])}" if len(cells) > 1 else (cells[0] if cells else ""))
    first = re.sub(r"\s*\((see|cf\.?)\s[^)]*\)", "", row[0]).strip() if row else ""
    if re.fullmatch(r"[\d,\s]+(and\s+\d+)?", first) and header[0]:
        first = f"{header[0]} {first}"
    parts = []
    for i in _keep_columns(header, question):
        if i >= len(row) or not row[i]:
            continue
        long_cell = len(row[i].split()) >= _LONG_CELL_WORDS or row[i].endswith(".")
        cell = row[i].rstrip(".")
        pieces = _CELL_SENTENCE.split(cell) if len(cell.split()) <= _SHORT_ROW_WORDS else []
        if len(pieces) > 1:  # a row is one sentence: "Available. $500 per …" reads "Available; $500 per …"
            cell = "; ".join(p.strip().rstrip(".") for p in pieces)
        number = _BARE_NUMBER.match(cell) if _RATE_HEADER.search(header[i]) else None
        if number:
            # A number under a unit ("Requests per minute per workspace") reads as a quantity: "1,200 requests
            # per minute per workspace", the value with its unit, as a reader would say it.
            note = f" {number.group(2)}" if number.group(2) else ""
            parts.append(f"{number.group(1)} {header[i][:1].lower()}{header[i][1:]}{note}")
            continue
        parts.append(cell if long_cell or not header[i] else f"{header[i]} {cell}")
    subject = (
        f"{label}, {first[:1].lower() + first[1:]}"
        if label and first and fold(label) not in fold(first)
        else first or label
    )
    return _end(f"{subject}: {'; '.join(parts)}" if parts else subject)


def _is_table(block: str) -> bool:
    return block.startswith("|") or bool(re.search(r"\|\s*:?-{3,}:?\s*\|", block)) or (
        block.count("|") >= 6 and " | | " in block)


def units(text: str, question: str = "") -> list[Unit]:
    """The passage as plain sentences, in order, each with its section."""
    # Only a table's rows read the question (the columns kept), and a table needs a "|" (`_is_table`; the
    # HTML stripping adds none): a passage without one is parsed once for every question.
    return list(_units(text, question if "|" in text else ""))


@memoised(TEXT_CACHE_SIZE // 8)  # compression and synthesis parse the same passages for one question
def _units(text: str, question: str) -> tuple[Unit, ...]:
    return tuple(_parse_units(text, question))


def _parse_units(text: str, question: str) -> list[Unit]:
    text = strip_html(_FENCE.sub(" ", text))
    out: list[Unit] = []
    section, label = "", ""
    for raw in re.split(r"\n\s*\n", text):
        block = " ".join(raw.split())
        if not block:
            continue
        heading = _HEADING.match(block)
        if heading:
            section, label = _NUMBERING.sub("", inline(heading.group(1))), ""
            continue
        bold = _BOLD_ONLY.match(block)
        if bold:
            label = inline(bold.group(1)).rstrip(".:")
            continue
        context = f"{section}. {label}" if section and label else section or label
        if _is_table(block):
            header, rows = _split_rows(block)
            for row in rows:
                sentence = render_row(header, row, label, question)
                if len(words(sentence)) < 2:
                    continue
                # A row whose cell is a paragraph reads better sentence by sentence (the subject stays on
                # the first one, and the row's subject is the context of the others).
                parts = split_sentences(sentence) if len(sentence.split()) > 40 else [sentence]
                subject = sentence.split(": ", 1)[0] if ": " in sentence else ""
                out.append(Unit(parts[0], context, "row"))
                out.extend(
                    Unit(
                        _end(p), f"{context}. {subject}" if context and subject else subject or context, "row"
                    )
                    for p in parts[1:]
                )
            continue
        asked = _FAQ_PAIR.match(block)
        # An FAQ's answer is about its question, which becomes its sentences' context (their stems in the
        # pick, never a prefix): serves a question asked in other words than the FAQ's ("How long is the free
        # trial?" answered under "Q: Is there a free trial?" by "A: Yes, 30 days …").
        if asked:
            out.append(Unit(_end(inline(asked.group(1))), context))
            context = f"{context}. {asked.group(1)}" if context else asked.group(1)
            block = block[asked.end():]
        lead_label = _BOLD_LEAD.match(block)
        if lead_label:
            context = f"{context}. {inline(lead_label.group(1))}" if context else inline(lead_label.group(1))
            block = block[lead_label.end():]
        out.extend(_prose(block, context))
    return [u for u in out if u.text and re.search(r"\w", u.text)]


def _prose(block: str, context: str) -> list[Unit]:
    """A paragraph, or a list (with the lead-in sentence before it), as units."""
    lead, items = "", []
    if _BULLET_START.match(block):
        items = _BULLET_SPLIT.split(_BULLET_START.sub("", block))
    elif re.match(r"^1\.\s+\S", block):
        items = [re.sub(r"^\d{1,2}\.\s+", "", i) for i in _NUMBERED_SPLIT.split(block)]
    elif re.search(r"[.:!?]\s+[-*•]\s+\S", block):
        lead, rest = re.split(r"(?<=[.:!?])\s+(?=[-*•]\s+\S)", block, maxsplit=1)
        items = _BULLET_SPLIT.split(_BULLET_START.sub("", rest))
    if not items:
        return [Unit(_end(inline(s)), context) for s in split_sentences(block)]
    out: list[Unit] = []
    lead = inline(lead)
    short_lead = lead.endswith(":") and len(lead.split()) <= 20
    if lead and not short_lead:
        out.extend(Unit(_end(s), context) for s in split_sentences(lead))
    for item in items:
        # "1. **First purchase guarantee (14 days).** If your organization …": the bold label names what the
        # item's sentences are about, as a heading would.
        labelled = _BOLD_LEAD.match(item.strip())
        where = context
        # a label that is a title ("… (14 days).")
        if labelled and re.match(r"\*\*[^*]+\.\*\*", item.strip()):
            label = inline(labelled.group(1)).rstrip(".:")
            where = f"{context}. {label}" if context else label
            item = item.strip()[labelled.end():]
        item = inline(item)
        if not item:
            continue
        sentences = split_sentences(item) or [item]
        first = f"{lead.rstrip(':')}: {sentences[0]}" if short_lead else sentences[0]
        out.append(Unit(_end(first), where, "item"))
        out.extend(Unit(_end(s), where, "item") for s in sentences[1:])
    return out


def enumerates(text: str) -> bool:
    """A bare list of names, not a sentence ("HTTP request, Slack, Google Sheets, … and Amazon S3."): what
    they
    are, and who gets them, is said only by the heading above them."""
    parts = [p.strip() for p in re.split(r",\s*|\s+and\s+|\s+or\s+", text.rstrip(" .")) if p.strip()]
    if len(parts) < 4 or any(len(p.split()) > 4 for p in parts):
        return False
    return sum(1 for p in parts if p[:1].isupper() or p[:1].isdigit()) >= 0.75 * len(parts)


def with_context(unit: Unit) -> str:
    """The unit's text, prefixed by its section when the section names something (a code, a plan, a
    product) that the text does not: "ERR_4030 — Organization suspended: The organization is …"; a bare
    list of names always gets its heading ("Standard connectors (all plans): HTTP request, Slack, …")."""
    return _with_context(unit.text, unit.section, unit.kind)


@memoised(TEXT_CACHE_SIZE)  # compression and synthesis ask it of the same units in every hop
def _with_context(text: str, section: str, kind: str) -> str:
    if not section or len(section.split()) > 10 or section.endswith("?"):
        return text
    if enumerates(text):
        return f"{section}: {text}"
    if kind == "item":
        return text
    text_stems = content_stems(text)
    named = [w for w in _naming(section) if content_stems(w) - text_stems]
    if not named:
        return text
    # A section joins a heading and a label ("How data is backed up. Retention"): only the parts that name
    # something prefix the text, and never as a sentence of their own. Serves every question answered from
    # a labelled item, whose first sentence must hold the value, not the heading ("How data is backed up.").
    parts = [p for p in section.split(". ") if any(w in re.findall(r"[\w-]+", p) for w in named)]
    return f"{' — '.join(parts or [section])}: {text}"


def _naming(label: str) -> list[str]:
    """The words of a label or section that name something: a capitalised word after the first, a word with
    a digit or an underscore, an acronym ("Organization", "ERR_4030", "UK-1", "MFA")."""
    tokens = re.findall(r"[\w-]+", label)
    return [w for i, w in enumerate(tokens)
            if (i > 0 and w[:1].isupper()) or any(c.isdigit() or c == "_" for c in w)
            or (len(w) > 1 and w.isupper())]
