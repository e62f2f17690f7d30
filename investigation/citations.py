"""Citation markers ([1], [2] …) and their validation against the evidence set before delivery.

A marker is valid when a citation with that number points at an evidence id of the set; any other marker
is removed from the text and the answer carries a caveat saying so.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from investigation.state import Answer, Citation, Evidence, RetrievalScope, Visibility
from investigation.text import split_sentences

MARKER = re.compile(r"\s?\[(\d{1,3})\]")


def evidence_id(chunk_id: str) -> str:
    """Stable, deterministic evidence id of a chunk within an investigation."""
    return "ev_" + hashlib.sha1(chunk_id.encode("utf-8")).hexdigest()[:10]


def markers_in(text: str) -> list[int]:
    """The marker numbers used in `text`, in order of first use."""
    return list(dict.fromkeys(int(m.group(1)) for m in MARKER.finditer(text)))


def cite(evidence: Sequence[Evidence]) -> tuple[Citation, ...]:
    """Citations numbering `evidence` 1, 2, … in the order given."""
    return tuple(
        Citation(marker=i, evidence_id=e.id, source_id=e.source_id, title=e.title,
                 internal=e.visibility is Visibility.INTERNAL)
        for i, e in enumerate(evidence, start=1)
    )


def validate(answer: Answer, evidence: Sequence[Evidence], scope: RetrievalScope | None = None) -> Answer:
    """Drop dangling markers and citations; keep only citations used in the text, renumbered densely, each
    marked `internal` from its evidence. With a `scope`, every sentence citing evidence the scope does not
    admit (internal text for a customer) is removed first."""
    by_id = {e.id: e for e in evidence}
    if scope is not None:
        barred = {c.marker for c in answer.citations
                  if c.evidence_id in by_id and not scope.admits(by_id[c.evidence_id].visibility)}
        if barred:
            kept = [s for s in split_sentences(answer.text) if not set(markers_in(s)) & barred]
            removed = len(split_sentences(answer.text)) - len(kept)
            note = f"removed {removed} sentence(s) citing internal documents"
            answer = answer.model_copy(
                update={
                    "text": " ".join(kept),
                    "citations": tuple(c for c in answer.citations if c.marker not in barred),
                    "caveat": f"{answer.caveat}; {note}" if answer.caveat else note,
                }
            )
    valid = {
        c.marker: c.model_copy(update={"internal": by_id[c.evidence_id].visibility is Visibility.INTERNAL})
        for c in answer.citations
        if c.evidence_id in by_id and by_id[c.evidence_id].source_id == c.source_id
    }
    used = markers_in(answer.text)
    dangling = [m for m in used if m not in valid]
    renumber = {old: new for new, old in enumerate((m for m in used if m in valid), start=1)}

    def replace(match: re.Match[str]) -> str:
        old = int(match.group(1))
        if old not in renumber:
            return ""
        return f"{match.group(0)[:-len(match.group(0).lstrip())]}[{renumber[old]}]"

    text = MARKER.sub(replace, answer.text)
    citations = tuple(valid[old].model_copy(update={"marker": new}) for old, new in renumber.items())
    caveat = answer.caveat
    if dangling:
        note = f"removed {len(dangling)} citation(s) that matched no evidence: " + ", ".join(
            f"[{m}]" for m in dangling)
        caveat = f"{caveat}; {note}" if caveat else note
    return answer.model_copy(update={"text": text, "citations": citations, "caveat": caveat})
