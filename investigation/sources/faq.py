"""FAQ candidates from solved tickets: resolutions of similar questions grouped, so an operator can publish
the recurring ones (nothing learnt from tickets reaches a customer without that approval)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset((
    "a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "is", "are", "was", "be",
    "my", "i", "we", "you", "it", "can", "cannot", "not", "how", "what", "why", "do", "does", "did",
    "with", "from", "this", "that", "at", "by", "me", "our", "your", "please", "help", "hi", "hello",
))
SIMILAR = 0.5  # Jaccard overlap of question words at which two tickets ask the same thing
MIN_TICKETS = 2  # a resolution given once is not yet a FAQ


@dataclass(frozen=True)
class Resolved:
    """One solved ticket: its question (the subject), its resolution (redacted agent replies), its link."""

    ticket_id: str
    question: str
    resolution: str
    url: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A group of tickets asking the same thing; `key` is stable while the group's first ticket stays."""

    key: str
    question: str
    answer: str
    ticket_ids: tuple[str, ...]


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def group(tickets: Sequence[Resolved], *, threshold: float = SIMILAR,
          min_tickets: int = MIN_TICKETS) -> list[Candidate]:
    """Greedy single-pass grouping by question-word overlap (tickets in id order, so the result is the same
    on every run); groups of at least `min_tickets`, most tickets first. The answer is the longest
    resolution of the group (the most complete one an agent wrote)."""
    groups: list[tuple[frozenset[str], list[Resolved]]] = []
    for ticket in sorted(tickets, key=lambda t: (len(t.ticket_id), t.ticket_id)):
        bag = words(ticket.question)
        if not bag or not ticket.resolution.strip():
            continue
        best = max(groups, key=lambda g: similarity(g[0], bag), default=None)
        if best is not None and similarity(best[0], bag) >= threshold:
            best[1].append(ticket)
        else:
            groups.append((bag, [ticket]))
    out = []
    for _, members in groups:
        if len(members) < min_tickets:
            continue
        ids = tuple(m.ticket_id for m in members)
        key = hashlib.sha256(ids[0].encode()).hexdigest()[:12]
        answer = max(members, key=lambda m: len(m.resolution)).resolution
        out.append(Candidate(key=key, question=members[0].question, answer=answer, ticket_ids=ids))
    return sorted(out, key=lambda c: (-len(c.ticket_ids), c.key))
