"""The entities a chunk or a question names, as normalised keys: the nodes of the chunk–entity graph the
`entities` engine expands over (a multi-hop question's bridge is the passage about an entity another
passage names). Rules only, no model: titles, capitalised spans, quoted names, codes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from investigation.state import Evidence, Grade, QueryKind, SubQuery
from investigation.tokens import content_words
from investigation.wordlists import MONTHS, WEEKDAYS

# A capitalised word (letters, digits, apostrophes, hyphens, inner dots: "O'Neil", "Jean-Luc", "U.S").
_CAP = r"[A-Z\u00C0-\u00DE](?:[\w'’\-]|\.(?=\w))*"
# Lower-case words allowed inside a name between two capitalised ones ("Journal of Psychotherapy
# Integration").
_JOINERS = r"(?:of|the|de|la|le|du|da|van|von|der|del|for|on|in|&)"
_SPAN = re.compile(rf"\b{_CAP}(?:\s+(?:{_JOINERS}\s+)*{_CAP})*")
_QUOTED = re.compile(r"[\"“«]([^\"”»\n]{2,60})[\"”»]")
# Error, plan and product codes: letters then digits ("WG-1001", "ERR_4021", "KI-77", "PCL3100").
_CODE = re.compile(r"\b[A-Z]{1,6}[-_]?\d{2,6}\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")
# Capitalised only because they start a sentence or a heading; never an entity on their own.
_COMMON_WORDS = """
a an the this that these those it its i we you he she they my our your his her their there here
in on at by for from to of with as if when where which who whom whose what why how is are was were be
and or but not no yes so then than also after before during while since until because although
q a note step see use what who when where which how does do did can could should would will may
"""
_COMMON = frozenset(_COMMON_WORDS.split())
_MAX_WORDS = 8
# A month or a weekday is capitalised but names no passage to follow.
_DATES = frozenset([*MONTHS, *WEEKDAYS])
# The engine that searches the entity index. The first hop has no graded evidence to bridge from, so only
# follow-up hops (one slot, seeded by the entities the graded evidence names) add it to their chord.
ENGINE = "entities"
# How many names of the graded evidence seed a follow-up hop's entity search, and from how many passages.
MAX_SEEDS = 8
MAX_SEED_PASSAGES = 4


def hop_engines(engines: list[str], hop: int) -> list[str]:
    """The engines of a hop's chord: every engine, except `entities` on the first hop."""
    return [e for e in engines if hop > 1 or e != ENGINE]


def normalise(name: str) -> str:
    """The graph's key for a name: accents folded, case folded, punctuation dropped, a leading "the" gone."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").casefold()
    words = re.findall(r"[a-z0-9]+", folded)
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def _spans(text: str) -> list[str]:
    out: list[str] = []
    for match in _SPAN.finditer(text):
        words = match.group(0).split()
        starts_sentence = bool(_SENTENCE_START.search(text[: match.start()]))
        # A sentence-initial common word is not part of the name: "The Beatles" keeps "Beatles".
        while words and words[0].casefold() in _COMMON:
            words = words[1:]
            starts_sentence = False
        if not words or len(words) > _MAX_WORDS:
            continue
        if len(words) == 1 and starts_sentence and len(words[0]) < 4:
            continue  # "Yes", "Add", "Use": short sentence starters are too often plain words
        out.append(" ".join(words))
    return out


def _names(text: str) -> list[str]:
    """The names of a text as written (quoted names, capitalised spans, codes), in order of appearance."""
    found = [(m.start(), m.group(1)) for m in _QUOTED.finditer(text)]
    found.extend((m.start(), m.group(0)) for m in _CODE.finditer(text))
    at = 0
    for span in _spans(text):
        at = max(0, text.find(span, at))
        found.append((at, span))
    return [name for _, name in sorted(found, key=lambda item: item[0])]


def _base(title: str) -> str:
    """A title without its trailing parenthesis: "Always (2011 film)" → "Always"."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()


def seed_query(question: str, evidence: Sequence[Evidence]) -> SubQuery | None:
    """A follow-up hop's entity search, seeded by the graded evidence: the names the passages graded
    relevant so far mention that neither the question nor any retrieved passage's title names (the bridge
    entities whose own passages are still missing), best passages first, with the question's words that
    those passages' titles do not hold, to rank the chunks that name them. None when the evidence names
    nothing new.

    Serves multi-hop questions whose second passage is about an entity the first one names ("… located in
    Iowa" → the passage about Iowa), however the planner phrased its bridging query.
    """
    asked = f" {normalise(question)} "
    titles = {normalise(e.title) for e in evidence} | {normalise(_base(e.title)) for e in evidence}
    relevant = sorted((e for e in evidence if e.grade is not Grade.INCORRECT and not e.flagged),
                      key=lambda e: (e.grade is not Grade.CORRECT, -e.score, e.chunk_id))
    seeds: list[str] = []
    for passage in relevant[:MAX_SEED_PASSAGES]:
        for name in _names(passage.text):
            key = normalise(name)
            if (key and not key.isdigit() and key not in _COMMON and key not in _DATES and key not in titles
                    and f" {key} " not in asked and key not in map(normalise, seeds)):
                seeds.append(name)
    seeds = seeds[:MAX_SEEDS]
    if not seeds:
        return None
    # What the question still asks of the bridge passage: its words but those of the seed passages' titles
    # (already found), which would rank their look-alikes first.
    found = set(content_words(" ".join(e.title for e in relevant[:MAX_SEED_PASSAGES])))
    words = [w for w in dict.fromkeys(content_words(question)) if w not in found]
    return SubQuery(text=" ".join([*words, ", ".join(seeds)]), purpose="entities: " + ", ".join(seeds),
                    kind=QueryKind.ENTITIES)


def entities(text: str, title: str = "") -> list[str]:
    """Normalised, de-duplicated entity keys of a text (and its title, first), in order of appearance.

    Serves multi-hop questions (bridge entities: a person, a place, a work named in one passage and
    described in another) and support questions that name a plan, a product or an error code.
    """
    found: list[str] = []
    if title.strip():
        found.append(title)
    found.extend(m.group(1) for m in _QUOTED.finditer(text))
    found.extend(_spans(text))
    found.extend(m.group(0) for m in _CODE.finditer(text))
    keys: list[str] = []
    for name in found:
        key = normalise(name)
        if key and key not in keys and key not in _COMMON and not key.isdigit():
            keys.append(key)
    return keys
