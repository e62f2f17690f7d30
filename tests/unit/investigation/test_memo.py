"""The text caches: the same answers with and without them, no shared mutable results, bounded."""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from pathlib import Path

from heuristic import focus, pick_scoring, prose
from investigation import memo, text
from investigation.guards import untrusted

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ["Aschenbrödel", "Café “Zürich” — it’s Ångström's", "ＡＢＣ ﬁle", "İstanbul", "plain ASCII, Text.",
           "Kai-shek and the E.U.'s rules", "Severity 1 (Sev1) tickets", "naïve coöperation", ""]


def _reference_fold(value: str) -> str:
    """`fold` as it was before the ASCII shortcut."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower().replace("’", "'")


def _corpus_texts() -> list[str]:
    texts = list(SAMPLES)
    for line in (ROOT / "examples" / "kb" / "articles.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            doc = json.loads(line)
            texts += [doc["title"], doc["text"]]
    for line in (
        (ROOT / "examples" / "bench" / "hotpotqa" / "passages.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()[:400]
    ):
        if line.strip():
            doc = json.loads(line)
            texts += [doc["title"], doc["text"]]
    return texts


def test_fold_shortcut_gives_the_reference_result_on_the_sample_corpora() -> None:
    texts = _corpus_texts()
    assert any(not t.isascii() for t in texts) and any(t.isascii() for t in texts)
    with memo.caching(False):
        assert [text.fold(t) for t in texts] == [_reference_fold(t) for t in texts]


def _reference_words(value: str) -> tuple[str, ...]:
    """`text._words` as it was written first (one loop over every match)."""
    out: list[str] = []
    for word in text._WORD.findall(text.fold(value)):
        word = word.removesuffix("'s")
        out.append(word)
        if "-" in word:
            out.extend(part for part in word.split("-") if part)
    return tuple(out)


def _reference_stem(word: str) -> str:
    """`text.stem` as it was written first (and a final "ss" kept: "process", "access")."""
    w = word
    for suffix in ("ization", "ational", "ations", "ation", "ings", "ing", "ness", "ments", "ment",
                   "ities", "ity", "ers", "ors", "er", "or", "ies", "ied", "es", "ed", "ly", "s"):
        if len(w) - len(suffix) >= 4 and w.endswith(suffix) and not (suffix == "s" and w.endswith("ss")):
            w = w[: -len(suffix)]
            if suffix in ("ies", "ied", "ities"):
                w += "y"
            break
    return w


def test_words_and_stems_give_the_reference_results_on_the_sample_corpora() -> None:
    texts = _corpus_texts() + [
        "The Smiths' well-known \"co-op\" -- Jane's 1990s-era X-ray; it's",
        "a - b",
        "-",
    ]
    assert any("-" in t for t in texts) and any("'s" in text.fold(t) for t in texts)
    with memo.caching(False):
        assert [text.words(t) for t in texts] == [list(_reference_words(t)) for t in texts]
    found = {w for t in texts for w in _reference_words(t)} | {
        "cities",
        "studied",
        "nationalization",
        "ities",
    }
    assert [text.stem(w) for w in sorted(found)] == [_reference_stem(w) for w in sorted(found)]


def _every_primitive(value: str) -> tuple[object, ...]:
    return (text.fold(value), text.words(value), text.content_words(value), text.content_stems(value),
            text.query_key(value), text.split_sentences(value), text.quoted_titles(value),
            text.capitalised_spans(value), text.entities(value), text.count_tokens(value),
            text.ask_sentence(value), untrusted(value), focus._vocabulary([(value[:40], value), ("", value)]),
            prose.units(value, "Which plan includes SCIM?"))


def test_cached_and_uncached_primitives_agree() -> None:
    texts = _corpus_texts()[:300]
    with memo.caching(False):
        uncached = [_every_primitive(t) for t in texts]
    with memo.caching(True):
        cold = [_every_primitive(t) for t in texts]
        warm = [_every_primitive(t) for t in texts]
    assert cold == uncached
    assert warm == uncached


def test_callers_get_fresh_lists_and_sets() -> None:
    with memo.caching(True):
        sample = "The Business plan includes SCIM provisioning. Sev 1 tickets are answered in an hour."
        first = text.words(sample)
        first.append("poison")
        stems = text.content_stems(sample)
        stems.add("poison")
        names = text.entities(sample)
        names.clear()
        assert "poison" not in text.words(sample)
        assert "poison" not in text.content_stems(sample)
        assert text.entities(sample) == ["Business", "SCIM", "Sev 1"]


def test_caching_off_bypasses_and_empties_every_cache() -> None:
    with memo.caching(True):
        text.words("Warm this entry up")
        assert any(size for _h, _m, size in memo.stats().values())
        with memo.caching(False):
            assert not memo.enabled()
            assert all(size == 0 for _h, _m, size in memo.stats().values())
            text.words("Not cached while off")
            assert all(size == 0 for _h, _m, size in memo.stats().values())
        assert memo.enabled()


def test_caches_are_bounded() -> None:
    @memo.memoised(3)
    def shout(value: str) -> str:
        return value.upper()

    with memo.caching(True):
        for value in "abcdefg":
            assert shout(value) == value.upper()
        sizes = [size for name, (_h, _m, size) in memo.stats().items() if name.endswith("shout")]
    assert sizes == [3]


def test_a_passages_stems_with_its_title_are_its_parts_stems() -> None:
    """`body_stems(title, text)` is `content_stems(f"{title} {text}")` (and `passage_words(title, text)` is
    `words(f"{title}. {text}")`), on the sample corpora (each title with
    its passage, and with the next one's) and on parts whose ends could meet: a final sigma, a leading
    combining mark, a hyphen or a possessive at the boundary, full-width and accented letters."""
    texts = _corpus_texts()
    edges = [*SAMPLES, "ΟΔΥΣΣΕΥΣ", "\u0301accent", "Kai-", "-shek", "E.U.", "'s rules", "it’", "’s", "x", " "]
    pairs = list(itertools.pairwise(texts))
    pairs += [(a, b) for a in edges for b in edges]
    for on in (False, True):
        with memo.caching(on):
            assert [text.body_stems(a, b) for a, b in pairs] == [
                text.content_stems(f"{a} {b}") for a, b in pairs
            ]
            # A passage's words headed by its title ("{title}. {text}", focus's vocabularies) likewise.
            assert [text.passage_words(a, b) for a, b in pairs] == [
                tuple(text.words(f"{a}. {b}")) for a, b in pairs
            ]
            # Synthesis's stems ("-ion" nouns equated to their verbs) are taken part by part the same way.
            assert [pick_scoring._ion_stems(a) | pick_scoring._ion_stems(b) for a, b in pairs] == [
                pick_scoring._ion_stems(f"{a} {b}") for a, b in pairs]


def _reference_capitalised_spans(value: str) -> tuple[str, ...]:
    """`text._capitalised_spans` as it was before it folded only the words it asks about."""
    spans: list[str] = []
    current: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if current:
            span = " ".join(current).strip(".'’")
            if span.endswith(("'s", "’s")):
                span = span[:-2]
            if span:
                spans.append(span)
        current.clear()
        pending.clear()

    sentence_start = True
    for raw in re.findall(r"[^\s,;:!?()\[\]\"“”]+|[,;:!?()\[\]\"“”]", value):
        if len(raw) == 1 and not raw.isalnum():
            flush()
            sentence_start = sentence_start or raw in "!?"
            continue
        ends_sentence = raw.endswith(".") and len(raw) > 2 and text.fold(raw.rstrip(".")) not in text._ABBREV
        token = raw.rstrip(".") if ends_sentence else raw
        low = text.fold(token)
        if current and not pending and token.isdigit() and len(token) <= 3:
            current.append(token)
        elif text._is_capitalised(token) and not (sentence_start and (low in text.QUESTION_WORDS
                                                                      or low in text.STOPWORDS)):
            current.extend(pending)
            pending.clear()
            current.append(token)
        elif current and low in text.NAME_CONNECTORS:
            pending.append(token)
        else:
            flush()
        sentence_start = ends_sentence
        if ends_sentence:
            flush()
        elif current and current[-1].endswith(("'s", "’s")):
            pending.clear()
    flush()
    return tuple(spans)


def test_capitalised_spans_give_the_reference_result_on_the_sample_corpora() -> None:
    texts = [
        *_corpus_texts(),
        "Who is the Bank of America's CEO? The Woman's Viewpoint. Big Hero 6 and Apollo 11.",
        "of the Kings: Louis XIV of France, the Sun King; (see Versailles) “Le Roi” ! Who? Is it Dr. Who.",
    ]
    with memo.caching(False):
        assert [text._capitalised_spans(t) for t in texts] == [_reference_capitalised_spans(t) for t in texts]
