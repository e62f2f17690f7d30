"""The ASCII patterns of `investigation.text` (`_WORD_ASCII`, `_TOKEN_ASCII`) match exactly what the Unicode
patterns match on ASCII text: every character alone, every pair, and random strings heavy with the characters
where the two could part (separators, controls, punctuation); and the words and token counts of the sample
corpora are the same either way."""

from __future__ import annotations

import json
import random
from itertools import product
from pathlib import Path

import pytest

from investigation import text
from investigation.text import _TOKEN, _TOKEN_ASCII, _WORD, _WORD_ASCII

ASCII = [chr(i) for i in range(128)]
SAMPLES = Path(__file__).resolve().parents[3] / "examples" / "bench"


@pytest.mark.parametrize(("unicode", "ascii"), [(_WORD, _WORD_ASCII), (_TOKEN, _TOKEN_ASCII)])
def test_every_ascii_character_and_pair_matches_alike(unicode: object, ascii: object) -> None:
    for a, b in product(ASCII, repeat=2):
        for s in (a, a + b, f"x{a}y{b}z", f"{a}1-{b}'s"):
            assert ascii.findall(s) == unicode.findall(s), repr(s)  # type: ignore[attr-defined]


def test_random_ascii_strings_match_alike() -> None:
    rng = random.Random(14)
    tricky = list("aZ09_ .-'’,;\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x7f")  # ’ only in the non-ASCII strings
    for _ in range(20_000):
        s = "".join(rng.choice(tricky if rng.random() < 0.6 else ASCII) for _ in range(rng.randint(0, 40)))
        if s.isascii():
            assert _WORD_ASCII.findall(s) == _WORD.findall(s), repr(s)
            assert _WORD_ASCII.findall(s.lower()) == _WORD.findall(s.lower()), repr(s)
            assert _TOKEN_ASCII.findall(s) == _TOKEN.findall(s), repr(s)


def test_the_sample_passages_read_the_same_words_and_token_counts() -> None:
    """Each passage as it is (ASCII: the fast path) and with a Cyrillic word after a space, which keeps the
    text
    non-ASCII once folded (the Unicode path) and adds exactly that word and token."""
    texts: list[str] = []
    for name in ("hotpotqa", "musique"):
        for line in (SAMPLES / name / "passages.jsonl").read_text(encoding="utf-8").splitlines():
            passage = json.loads(line)
            texts += [passage["title"], passage["text"]]
    ascii_texts = [t for t in texts if t.isascii()]
    assert len(ascii_texts) > len(texts) // 2  # the fast path is what most passages take
    words, count = text._words.__wrapped__, text.count_tokens.__wrapped__  # type: ignore[attr-defined]
    for t in ascii_texts:
        assert words(t) + ("ж",) == words(f"{t} ж"), t
        assert count(t) + 1 == count(f"{t} ж"), t
