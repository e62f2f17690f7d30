"""The heuristics that search a pattern only in text holding a literal it needs give the answers of searching
every time, on every kind of text.

`prose.strip_html` and `prose.inline` skip each substitution whose pattern cannot match (no "<", "](", "`",
"*" or "__", no leading ">"), and `focus._in_window` answers "no" at once when a word of the phrase is not in
the sequence. These tests compare them with the unscreened forms (written out below as they were before the
screens) on the knowledge bases' passages and on texts built from the patterns' own pieces in random order,
so a screen that skipped a needed search, or a reordered step, would show as a difference.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from heuristic import focus, prose

ROOT = Path(__file__).resolve().parents[3]
PIECES = [
    "<div>",
    "</div>",
    "<div hidden>",
    "<span style='display:none'>",
    "</span>",
    "<!--",
    "-->",
    "<script>",
    "</script>",
    "<system>",
    "</passage>",
    "<b>",
    "<token>",
    "<br/>",
    "[link](http://x.io)",
    "[a]",
    "(b)",
    "](",
    "`code`",
    "`",
    "**",
    "*",
    "__",
    "_",
    "> ",
    ">",
    "**>",
    "*>*",
    "text",
    "Word",
    "more words",
    "é",
    "“quoted”",
    "\n",
    "  ",
    "-",
    "1.",
]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) + rng.choice(["", " ", "\n"]) for _ in range(rng.randint(1, 10)))
            for _ in range(count)]


def _corpus() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").rglob("*.md"))]
    return texts + [line for text in texts for line in text.splitlines() if line.strip()]


def _strip_html_unscreened(text: str) -> str:
    text = prose._SCRIPT.sub(" ", prose._HIDDEN_HTML.sub(" ", text))
    return prose._FENCE_TAG.sub(" ", prose._TAG.sub(" ", prose._HTML_COMMENT.sub(" ", text)))


def _inline_unscreened(text: str) -> str:
    text = prose._LINK.sub(r"\1", _strip_html_unscreened(text))
    text = prose._CODE.sub(r"\1", text)
    for _ in range(2):
        text = prose._EMPHASIS.sub(lambda m: m.group(2) or m.group(3) or "", text)
    text = re.sub(r"^>\s*", "", text).replace("**", "")
    return " ".join(text.split())


def test_strip_html_and_inline_agree_with_searching_every_pattern() -> None:
    texts = _corpus() + _texts(5, 20_000)
    # the patterns do act
    assert sum(1 for t in texts if _inline_unscreened(t) != " ".join(t.split())) > 5_000
    assert [t for t in texts if prose.strip_html(t) != _strip_html_unscreened(t)] == []
    assert [t for t in texts if prose.inline(t) != _inline_unscreened(t)] == []


def test_a_leading_quote_mark_is_stripped_after_the_emphasis_is() -> None:
    # "**" goes after the leading ">" is looked for: what was behind it stays.
    assert prose.inline("**>  x") == _inline_unscreened("**>  x") == "> x"
    assert prose.inline("> **bold** text") == "bold text"


def _in_window_unscreened(phrase: list[str], sequence: str, gap: int = 2) -> bool:
    return focus._window(tuple(phrase), gap).search(sequence) is not None


def test_a_phrase_window_agrees_with_searching_every_time() -> None:
    rng = random.Random(3)
    vocabulary = ["captain", "john", "h.", "miller", "the", "of", "sev", "1", "a-b", "ab", "mill", "|"]
    cases = []
    for _ in range(20_000):
        sequence = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 12)))
        phrase = [rng.choice(vocabulary[:-1]) for _ in range(rng.randint(1, 3))]
        cases.append((phrase, sequence))
    assert sum(_in_window_unscreened(p, s) for p, s in cases) > 1_000
    assert [(p, s) for p, s in cases if focus._in_window(p, s, f" {s} ") != _in_window_unscreened(p, s)] == []
