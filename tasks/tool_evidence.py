"""A tool result as a hop's evidence: the requester's part of it (narrowed to the items the question
names, injected fields fenced, projected for the audience) as one passage, and the knowledge base's
passages about the finding, parked next to it for the reducer."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bootstrap import Services
from investigation.errors import SleuthError
from investigation.state import Passage, RetrievalScope
from investigation.tools.declaration import ToolDeclaration
from investigation.tools.evidence import as_passage, tool_engine
from investigation.tools.narrowing import missing_sentence, narrow
from investigation.tools.policy import CallScope
from investigation.tools.projection import fence, injected_field, project
from storage.hits import SlotHits
from storage.models import Investigation

RELATED = "related"  # slot prefix of the documents found for a tool's finding


def related_slots(stored: dict[str, SlotHits]) -> list[SlotHits]:
    """The parked knowledge-base look-ups of a hop's tool findings (see `call_tool`)."""
    return [hits for slot, hits in sorted(stored.items()) if slot.startswith(f"{RELATED}:")]


def add_evidence(services: Services, inv: Investigation, hop: int, decl: ToolDeclaration, scope: CallScope,
                 args: dict[str, Any], document: dict[str, Any], fetched_ts: float, notice: str,
                 payload: dict[str, Any], trace: dict[str, Any]) -> None:
    """The requester's part of a result as the hop's passage (and its knowledge-base look-up)."""
    narrowed = narrow(decl, document, scope.question)  # an id the question names picks its item
    if narrowed.missing:
        trace["not_yours"] = missing_sentence(decl, narrowed.missing)
    if narrowed.named and len(narrowed.missing) == len(narrowed.named):
        return  # none of the named items is the requester's: said plainly, nothing else shown
    document = narrowed.document
    # An instruction planted in one free-text field drops that field, not the record around it.
    visible, fenced = fence(project(document, decl.fields_for(scope.audience)), injected_field)
    if fenced:
        trace["fenced"] = sorted(set(fenced))
    fetched = datetime.fromtimestamp(fetched_ts, UTC).strftime("%H:%M")  # the call's time, not the read's
    passage = as_passage(decl, visible, args, fetched, notice=notice)
    payload["passages"] = (passage,)
    trace.update(title=passage.title, payload=visible, fetched_at=fetched_ts)
    if decl.search_kb:  # parked next to the tool's own slot, filed under the finding as its query
        finding = passage.text.split(". ")[0][:300]
        related = look_up(services, inv, finding)
        services.state.store_hits(inv.id, hop, f"{RELATED}:{tool_engine(decl.name)}", SlotHits(
            query=finding, engine=tool_engine(decl.name), error=None, passages=tuple(related)))
        trace["related"] = [p.chunk_id for p in related]


def look_up(services: Services, inv: Investigation, query: str, k: int = 5) -> list[Passage]:
    """The knowledge base's passages about a tool's finding, under the same audience and ACL filter as
    any retrieval; each engine search is charged as a retrieval call."""
    scope = RetrievalScope.of(inv.audience, inv.principals)
    found: dict[str, Passage] = {}
    for backend in services.backends.values():
        if not services.state.charge(inv.id, "retrieval_calls", 1):
            break
        try:
            hits = backend.search(inv.tenant_id, query, k, acl=scope.acl, visibility=scope.visibility)
        except SleuthError:
            continue
        for hit in hits:
            found.setdefault(hit.chunk_id, hit)
    return sorted(found.values(), key=lambda p: (p.rank, p.engine))
