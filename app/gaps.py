"""The knowledge-gaps report: the tenant's questions that were refused, rated wrong or answered partly,
grouped by topic (their MiniLM vectors clustered, `app.gap_clusters`), each group labelled by its most typical
question and frequent terms, counted in the period and in the one before it; what a knowledge-base writer
should write
next. Read by the `/gaps` page and `sleuth gaps`."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session

from adapters.search.embedder import embed_matrix
from app import gap_clusters
from investigation.errors import ValidationFailed
from investigation.ports import Embedder
from storage import repositories as repo

# The page groups at most this many questions (the newest); `sleuth gaps --limit` may take more.
PAGE_LIMIT = 2000
_SPAN = re.compile(r"^\s*(\d{1,4})\s*([hdw])\s*$")
_UNIT = {"h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, option: str = "--since") -> timedelta:
    """`30d`, `12h`, `2w` → a timedelta (1 hour to 5 years); anything else is refused naming `option`."""
    found = _SPAN.match(text or "")
    if not found:
        raise ValidationFailed(option, f"{text!r} is not a period such as 30d, 12h or 2w")
    span = timedelta(**{_UNIT[found.group(2)]: int(found.group(1))})
    if not timedelta(hours=1) <= span <= timedelta(days=5 * 366):
        raise ValidationFailed(option, f"{text!r} must be between 1h and 1830d")
    return span


@dataclass(frozen=True)
class GapQuestion:
    id: str
    question: str
    created_at: datetime
    reason: str  # refused | wrong | partly


@dataclass(frozen=True)
class Gap:
    """One topic: its most typical question, frequent terms, and how often it came up."""

    label: GapQuestion
    terms: list[str]
    count: int  # questions in the period
    previous: int  # questions in the period before, as long
    reasons: dict[str, int]
    questions: list[GapQuestion]  # the period's, newest first

    @property
    def trend(self) -> str:
        if self.previous == 0:
            return "new"
        change = self.count - self.previous
        return "same" if change == 0 else f"{change:+d}"

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label.question,
            "label_id": self.label.id,
            "terms": self.terms,
            "count": self.count,
            "previous": self.previous,
            "trend": self.trend,
            "reasons": self.reasons,
            "questions": [
                {
                    "id": q.id,
                    "question": q.question,
                    "reason": q.reason,
                    "created_at": q.created_at.isoformat(timespec="seconds"),
                }
                for q in self.questions
            ],
        }


@dataclass(frozen=True)
class GapReport:
    since: datetime
    until: datetime
    threshold: float
    questions: int  # gap questions in the period
    previous: int  # and in the one before
    truncated: bool  # the limit left older questions out
    gaps: list[Gap] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat(timespec="seconds"),
            "until": self.until.isoformat(timespec="seconds"),
            "threshold": self.threshold,
            "questions": self.questions,
            "previous": self.previous,
            "truncated": self.truncated,
            "gaps": [g.as_json() for g in self.gaps],
        }


def knowledge_gaps(
    session: Session,
    embedder: Embedder,
    *,
    tenant_id: str,
    since: datetime,
    until: datetime,
    threshold: float = gap_clusters.DEFAULT_THRESHOLD,
    limit: int | None = PAGE_LIMIT,
) -> GapReport:
    """Group the gap questions of [since, until) together with those of the period before (so a topic's
    trend compares like with like); groups with no question in the period are left out. Biggest first."""
    earlier = since - (until - since)
    rows = repo.gap_questions(session, tenant_id=tenant_id, since=earlier, until=until, limit=limit)
    items = [GapQuestion(*row) for row in rows]
    truncated = limit is not None and len(items) >= limit
    now = [q for q in items if q.created_at >= since]
    report = GapReport(since, until, threshold, questions=len(now), previous=len(items) - len(now),
                       truncated=truncated)
    if not now:
        return report
    texts = [q.question for q in items]
    # Persisted in the embedder's disk cache (a content hash and a vector, no text): the same questions are
    # grouped again at every visit.
    vectors = embed_matrix(embedder, texts, persist=True)
    labels = gap_clusters.cluster(vectors, threshold)
    df = gap_clusters.document_frequencies(texts)
    for members in gap_clusters.groups(labels):
        current = [i for i in members if items[i].created_at >= since]
        if not current:
            continue
        # Labelled with a question of the period: the one closest to the whole group's centroid.
        label = items[gap_clusters.typical(vectors, members, among=current)]
        report.gaps.append(Gap(
            label=label, terms=gap_clusters.frequent_terms(texts, members, document_freq=df),
            count=len(current), previous=len(members) - len(current),
            reasons=dict(Counter(items[i].reason for i in current)),
            questions=sorted((items[i] for i in current), key=lambda q: (q.created_at, q.id), reverse=True)))
    report.gaps.sort(key=lambda g: (-g.count, -g.previous, g.label.question))
    return report
