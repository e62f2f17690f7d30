"""Final ranking of the evidence: each sub-query's best passages are kept, then the best of the rest.

The ranking (at most k, best first) is what a benchmark scores as `retrieved`; it does not depend on the
order the evidence arrives in, only on scores, hops, sub-queries and chunk ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from heuristic.chains import is_name, named_in
from heuristic.compression import compress
from heuristic.focus import focus_names, mentioning
from heuristic.grader import body_agreement, bridge_terms, lexical_agreement, weighted_terms
from heuristic.mentions import (
    base_title,
    find_anchors,
    is_name_like,
    linked_titles,
    linked_titles_to,
    mentions,
)
from heuristic.router import compared_entities
from investigation.state import Evidence, Grade
from investigation.text import body_stems, content_stems, fold, padded_words


@dataclass(frozen=True)
class SelectionConfig:
    """Bonuses on top of the agreement score, and how many of each sub-query's leaders are reserved."""

    link_bonus: float = 0.35  # title mentioned by an anchor or one of the strongest passages
    backlink_bonus: float = 0.1  # text mentions an anchor passage's title (the anchor links back)
    bridge_bonus: float = 0.1  # title is an entity a bridging query asked for
    chain_bonus: float = 0.3  # continues the chain: names what an anchor mentions, says what it leaves open
    named_bonus: float = 0.2  # the question names the title: where a chain starts, or a thing it compares
    described_bonus: float = 0.35  # names the bridge entity and says what its passage leaves open
    chain_text_reach: float = 0.5  # the name only in the text (not the title) counts this much
    chain_mentions: int = 6  # an anchor's most salient names that count as bridged entities
    strong_sources: int = 3
    reserve_per_query: int = 1
    reserve_per_bridge: int = 2  # a bridging query's leaders: the second hop of a chain
    reserve_correct: int = 2  # the passages graded correct with the highest agreement are always kept
    repeat_bonus_share: float = 0.5  # a document's n-th further chunk takes this share^n of the bonuses


def _key(e: Evidence) -> tuple[float, int, str]:
    return (-e.score, e.hop, e.chunk_id)


def final_scores(
    question: str, evidence: Sequence[Evidence], config: SelectionConfig = SelectionConfig()
) -> dict[str, float]:
    """chunk_id → agreement score plus link and bridge bonuses (the chain the walk found)."""
    pool = sorted({e.chunk_id: e for e in sorted(evidence, key=_key, reverse=True)}.values(), key=_key)
    strong = [e for e in pool if e.grade is Grade.CORRECT][: config.strong_sources]
    anchors = [a for a, _w in find_anchors(question, pool)[: config.strong_sources]]
    linked: set[str] = set()
    for source in {e.chunk_id: e for e in [*strong, *anchors]}.values():
        # Chain questions: a title inside a longer name is no link ("Paris" in "the Paris Exhibition").
        named = linked_titles(source, pool)
        linked |= {e.chunk_id for e in named if names_alone(base_title(e.title), source.text)}
    backlinked: set[str] = set()
    for anchor in anchors:
        for e in linked_titles_to(anchor, pool):
            backlinked.add(e.chunk_id)
    bridges = [b for b in (bridge_terms(question, q) for q in sorted({e.query for e in pool})) if b]
    # A chain of three passages ("the city where the performers of Brother were formed"): the passage an
    # anchor links to (the band) names the next link (the city), so it is a source of chain partners too.
    reached = [e for anchor in anchors for e in linked_titles(anchor, pool)]
    chain = _chain_partners(
        question, pool, list({e.chunk_id: e for e in [*anchors, *strong, *reached]}.values()), config
    )
    linked |= _shared_members(question, pool)
    # The bridge entities a later hop went to find, among the passages an anchor links to: the passage that
    # names one and says what the question describes it by is the first link of the chain.
    sought = {bridge_name(question, e.query) for e in pool if e.hop > 1} - {""}
    # Only when the question names no passage: a named one is where the chain starts, the description there.
    unnamed = not any(_named_by(question, e) for e in pool)
    targets = [
        e for e in pool if unnamed and e.chunk_id in linked and padded_words(base_title(e.title)) in sought
    ]
    described = _describing(question, pool, targets)
    scores: dict[str, float] = {}
    seen_sources: dict[str, int] = {}
    # best first: a document's first chunk takes the full bonuses, each further one half as much
    for e in pool:
        bonus = 0.0
        if e.chunk_id in linked:
            bonus += config.link_bonus
        elif e.chunk_id in backlinked:
            bonus += config.backlink_bonus
        if any(lexical_agreement(b, e.title) >= 0.5 for b in bridges):
            bonus += config.bridge_bonus
        bonus += max(
            config.chain_bonus * chain.get(e.chunk_id, 0.0),
            config.described_bonus * described.get(e.chunk_id, 0.0),
        )
        if _named_by(question, e):
            bonus += config.named_bonus
        nth = seen_sources.get(e.source_id, 0)
        seen_sources[e.source_id] = nth + 1
        scores[e.chunk_id] = e.score + bonus * config.repeat_bonus_share**nth
    return scores


def names_alone(name: str, text: str, *, capitalised: bool = False) -> bool:
    """The folded `name` occurs in `text` as a whole name, not as part of a longer one: no letter or digit
    either side, no hyphenated word before it ("West Africa" in "South-West Africa"), no capitalised word
    right after it ("Paris" in "Paris Exhibition"). With `capitalised`, the occurrence is written with a
    capital (a name as the text writes it, not a common word that happens to be a title)."""
    body = fold(text)
    cased = len(body) == len(text)  # positions in `body` are positions in `text` (no accent was folded)
    at = body.find(name) if len(name) >= 3 else -1
    while at >= 0:
        end = at + len(name)
        alone = not (at > 0 and body[at - 1].isalnum()) and not (end < len(body) and body[end].isalnum())
        hyphenated = at > 1 and body[at - 1] == "-" and body[at - 2].isalpha()
        continued = cased and text[end : end + 1] == " " and text[end + 1 : end + 2].isupper()
        written = not capitalised or not cased or text[at].isupper()
        if alone and written and not hyphenated and not continued:
            return True
        at = body.find(name, at + 1)
    return False


def _named_by(question: str, e: Evidence) -> bool:
    """The question names the passage's title ("Brother (Pearl Jam song)" for "the performers of Brother"):
    the passage is about a thing the question is about, whether the chain starts there or a comparison
    compares it."""
    return is_name_like(e.title) and names_alone(base_title(e.title), question, capitalised=True)


def _chain_partners(
    question: str, pool: Sequence[Evidence], sources: Sequence[Evidence], config: SelectionConfig
) -> dict[str, float]:
    """chunk_id → [0, 1]: how well a passage continues a chain from a source passage (an anchor or one of
    the strongest): it names an entity the source mentions and the question does not (the bridged
    entity: in its title fully, in its text partly), times its share of the question terms the source
    leaves open (what the next hop must say) — "Kansas's congressional districts" after "Henry Worrall
    died in Topeka, Kansas" for "the state where Henry Worrall died has how many congressional districts"."""
    question_terms = weighted_terms(question)
    titles = {e.chunk_id: padded_words(base_title(e.title)) for e in pool}
    texts = {e.chunk_id: padded_words(e.text) for e in pool}
    out: dict[str, float] = {}
    for source in sources:
        names = [
            key
            for key in (padded_words(n) for n, _s in mentions(source, question)[: config.chain_mentions])
            if len(key.strip()) >= 3
        ]
        covered = body_stems(source.title, source.text)
        open_terms = {t: w for t, w in question_terms.items() if t not in covered}
        if not names or not open_terms:
            continue
        for e in pool:
            if e.chunk_id == source.chunk_id:
                continue
            if any(n in titles[e.chunk_id] for n in names):
                reach = 1.0
            elif any(n in texts[e.chunk_id] for n in names):
                reach = config.chain_text_reach
            else:
                continue
            value = reach * body_agreement(open_terms, e.title, e.text)
            out[e.chunk_id] = max(out.get(e.chunk_id, 0.0), value)
    return out


def _describing(question: str, pool: Sequence[Evidence], targets: Sequence[Evidence]) -> dict[str, float]:
    """chunk_id → [0, 1]: bridge questions that describe the bridge entity instead of naming it ("the
    drummer whose bandmates planned to dismiss him after a tour"): a passage naming a link target's title
    (the bridge entity), times its share of the question terms that target's own passage leaves open —
    the passage the description points to, which no link reaches."""
    question_terms = weighted_terms(question)
    out: dict[str, float] = {}
    for target in targets:
        title = base_title(target.title)
        # A target the question names is where the chain starts, not the entity the description stands for.
        if not is_name_like(target.title) or len(title) < 3 or names_alone(title, question):
            continue
        covered = body_stems(target.title, target.text)
        open_terms = {t: w for t, w in question_terms.items() if t not in covered}
        if not open_terms:
            continue
        values = {
            e.chunk_id: body_agreement(open_terms, e.title, e.text)
            for e in pool
            if base_title(e.title) != title and names_alone(title, e.text)
        }
        # Only the passage that says most of what is left open is the one the description points to; the
        # others naming the target (lists, hubs) already have their own bonuses.
        best = max(values.values(), default=0.0)
        for cid, value in values.items():
            if value == best:  # saying half of what is left open is as good as a link
                out[cid] = max(out.get(cid, 0.0), min(1.0, 2 * value))
    return out


def _shared_members(question: str, pool: Sequence[Evidence]) -> set[str]:
    """Intersection questions ("Who performed in both Welcome to the Show and the band f(x)?"): the passages
    that name one of the compared entities in their text and whose own name the passage about another one
    lists ("Sulli … a member of f(x)" and "It starred … Sulli Choi, …") — what both sides share."""
    names = [fold(n) for n in compared_entities(question)]
    if len(names) < 2:
        return set()
    about = {n: [fold(e.text) for e in pool if base_title(e.title) == n] for n in names}
    out: set[str] = set()
    for e in pool:
        title = base_title(e.title)
        if title in names or not is_name_like(e.title):
            continue
        for name in names:
            if names_alone(name, e.text) and any(
                named_in(text, title) for other in names if other != name for text in about[other]
            ):
                out.add(e.chunk_id)
    return out


def bridge_name(question: str, query: str) -> str:
    """Chains: the entity a bridging query went to find, as padded words — the words it opens with that the
    question does not say ("South-West Africa" of "South-West Africa popular hotel city birth"); "" when
    that is a single word (a word alone is no name to look for) or no proper name ("Billing guide": support
    articles have topic titles, not names)."""
    asked = content_stems(question)
    lead: list[str] = []
    for word in query.split():
        if asked & set(content_stems(word)):
            break
        lead.append(word)
    while lead and fold(lead[0]) in ("the", "a", "an"):
        lead.pop(0)
    name = " ".join(lead)
    return padded_words(name.replace("-", " ")) if len(lead) >= 2 and is_name(name) else ""


def _worth_reserving(question: str, e: Evidence, names_bridge: bool) -> bool:
    """A sub-query's best passage is kept when it agrees with the question, or when it is what a bridging
    query went to find (`names_bridge`: it names the query's whole entity; or it says the bridge terms) —
    graded against the original question, the second hop of a chain often looks off-topic ("Victoria
    Falls" for "the country where the Bubye River is")."""
    if e.grade is not Grade.INCORRECT:
        return True
    bridge = bridge_terms(question, e.query) if e.hop > 1 else {}
    return bool(bridge) and (names_bridge or body_agreement(bridge, e.title, e.text) >= 0.5)


def rank_evidence(
    question: str, evidence: Sequence[Evidence], k: int, config: SelectionConfig = SelectionConfig()
) -> list[Evidence]:
    """At most `k` evidence, best first by final score; each sub-query's best passage is reserved."""
    scores = final_scores(question, evidence, config)
    by_chunk = {e.chunk_id: e for e in evidence}
    order = sorted(scores, key=lambda cid: (-scores[cid], cid))
    chosen: list[str] = []
    groups: dict[tuple[int, str], list[str]] = {}
    for cid in order:
        e = by_chunk[cid]
        groups.setdefault((e.hop, e.query), []).append(cid)
    naming_bridge: set[str] = set()
    for (hop, query), members in groups.items():
        name = bridge_name(question, query) if hop > 1 else ""
        if name:  # a bridging query's passages that name its entity whole go first ("South West Africa")
            naming = [c for c in members if name in padded_words(f"{by_chunk[c].title} {by_chunk[c].text}")]
            naming_bridge.update(naming)
            members[:] = [*naming, *(c for c in members if c not in naming)]
    for depth in range(max(config.reserve_per_query, config.reserve_per_bridge)):
        for (hop, _query), members in sorted(groups.items(), key=lambda kv: (-scores[kv[1][0]], kv[1][0])):
            limit = config.reserve_per_bridge if hop > 1 else config.reserve_per_query
            if (
                depth < min(limit, len(members))
                and _worth_reserving(question, by_chunk[members[depth]], members[depth] in naming_bridge)
                and members[depth] not in chosen
                and len(chosen) < k
            ):
                chosen.append(members[depth])
    # The passages that agree best with the original question are always handed on, whatever the links say.
    for e in sorted((e for e in evidence if e.grade is Grade.CORRECT), key=_key)[: config.reserve_correct]:
        if e.chunk_id not in chosen and len(chosen) < k:
            chosen.append(e.chunk_id)
    # Each specific name of the question keeps its best passage: it anchors the answer (and shows the
    # knowledge base does talk about it).
    for name in focus_names(question):
        holders = mentioning(name, [by_chunk[cid] for cid in order])
        if holders and not any(h.chunk_id in chosen for h in holders) and len(chosen) < k:
            chosen.append(holders[0].chunk_id)
    for cid in order:
        if len(chosen) >= k:
            break
        if cid not in chosen:
            chosen.append(cid)
    chosen.sort(key=lambda cid: (-scores[cid], cid))
    return [by_chunk[cid] for cid in chosen]


def select_evidence(
    question: str,
    evidence: Sequence[Evidence],
    k: int,
    token_budget: int,
    config: SelectionConfig = SelectionConfig(),
) -> list[Evidence]:
    """The ranked evidence, compressed to `token_budget` tokens for synthesis."""
    return compress(question, rank_evidence(question, evidence, k, config), token_budget)
