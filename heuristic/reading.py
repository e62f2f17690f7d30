"""A found passage read ahead of the heuristics: what grading, judging, selection and synthesis first read of
it.

Every reading here is a pure function of the passage's title and text, memoised by the text caches
(investigation/memo.py), so reading a passage ahead changes no result: a step that reads it later finds the
values computed. The in-process executor reads a hop's lexical hits while the hop's query is being embedded
(tasks/inline.py), on a core the loop would leave idle; the readings needed first come first.
"""

from __future__ import annotations

from heuristic.focus import text_vocabulary
from heuristic.mentions import base_title
from heuristic.pick_scoring import content_stems as sentence_stems
from heuristic.prose import units, with_context
from investigation import memo
from investigation.guards import carries_instructions, untrusted
from investigation.memo import memoised
from investigation.state import Passage
from investigation.text import TEXT_CACHE_SIZE, body_stems, count_tokens, fold, padded_words, words


def read_passage(passage: Passage) -> None:
    """Warm the text caches with `passage` as the heuristics read it (nothing while caching is off)."""
    if memo.enabled():
        _read(passage.title, passage.text)


@memoised(TEXT_CACHE_SIZE)  # a passage read ahead once is found at once the next time (a worker's shared KB)
def _read(title: str, text: str) -> None:
    body_stems(title, text)  # grading
    untrusted(f"{title}\n{text}")  # the loop's guard on new evidence
    carries_instructions(text)  # what may ground a query
    text_vocabulary(title, text)  # judging: the names a passage covers
    padded_words(text)  # selection: the links between passages
    padded_words(base_title(title))
    count_tokens(title)  # compression
    sentence_stems(title)  # synthesis
    if "|" in text:  # a table's rows are read with the question's columns: left to the steps, which have it
        return
    for unit in units(text):  # compression and synthesis, sentence by sentence
        sentence = with_context(unit)
        count_tokens(sentence)
        words(sentence)
        fold(sentence)
        carries_instructions(sentence)
        sentence_stems(sentence)
        sentence_stems(unit.section)
