"""Production as a test set: the tenant's rated investigations as labelled decision rows, the format
`sleuth bench --decisions` reads (`cli.bench.load_set`): question, route, audience, the expected answer (the
rater's correction, else the answer rated helpful), the cited sources as gold."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from storage.feedback_models import Feedback
from storage.models import Investigation

_MARKER = re.compile(r"\s*\[\d+\]")
# The route a corrected refusal should have taken: it has an answer, so at least a single lookup.
ANSWERABLE = "lookup"


@dataclass
class Exported:
    rows: list[dict[str, Any]]
    skipped: dict[str, int]  # why a rated investigation gave no row → how many


def _label(inv: Investigation, ratings: list[Feedback]) -> dict[str, Any] | str:
    """The labelled row of one investigation from its current ratings (oldest first), or why there is none."""
    newest = ratings[-1]
    corrections = [f for f in ratings if f.correct_answer]
    cited = list(dict.fromkeys(str(c["source_id"]) for c in inv.citations or [] if c.get("source_id")))
    refused = inv.status == "refused" or inv.route == "out_of_corpus"
    if corrections:
        route = ANSWERABLE if refused or inv.route in (None, "direct") else inv.route
        gold = cited if newest.rating != "wrong" and not refused else []
        answer: str | None = corrections[-1].correct_answer
    elif inv.status not in ("answered", "refused"):
        return "not finished"
    elif newest.rating == "wrong":
        return "rated wrong without a correction"
    elif refused:
        if newest.rating != "helpful":
            return "refusal rated partly without a correction"
        route, gold, answer = "out_of_corpus", [], None  # the refusal was right
    else:
        route = inv.route or ANSWERABLE
        gold = cited
        # A helpful answer is the expected one; a partly right one only vouches for its sources.
        answer = (_MARKER.sub("", inv.answer or "").strip() or None) if newest.rating == "helpful" else None
        if route == "direct":
            gold, answer = [], None
    return {"id": inv.id, "question": inv.question, "route": route, "audience": inv.audience,
            "gold_source_ids": gold, "answer": answer, "rating": newest.rating,
            "rated_at": newest.created_at.isoformat(timespec="seconds"), "corrected": bool(corrections)}


def export_rated(session: Session, *, tenant_id: str, since: datetime, until: datetime) -> Exported:
    """Every investigation of the tenant with a current rating given in [since, until), oldest rated first."""
    stmt = (
        select(Feedback, Investigation)
        .join(Investigation, col(Investigation.id) == col(Feedback.investigation_id))
        .where(
            col(Feedback.tenant_id) == tenant_id,
            col(Feedback.current).is_(True),
            col(Feedback.created_at) >= since,
            col(Feedback.created_at) < until,
        )
        .order_by(col(Feedback.created_at), col(Feedback.id))
    )
    found: dict[str, tuple[Investigation, list[Feedback]]] = {}
    for fb, inv in session.exec(stmt).all():
        found.setdefault(inv.id, (inv, []))[1].append(fb)
    out = Exported([], {})
    for inv, ratings in found.values():
        row = _label(inv, ratings)
        if isinstance(row, str):
            out.skipped[row] = out.skipped.get(row, 0) + 1
        else:
            out.rows.append(row)
    return out


def lines(exported: Exported) -> Iterator[str]:
    """One JSON object per line."""
    for row in exported.rows:
        yield json.dumps(row, ensure_ascii=False)
