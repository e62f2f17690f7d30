"""What a step hands the canvas: the next work of an investigation (`tasks.workflow.dispatch` sends it)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from investigation.entities import ENGINE as ENTITY_ENGINE
from investigation.state import QueryKind
from investigation.tools.evidence import tool_engine


class NextKind(StrEnum):
    """What the canvas runs after a step (`tasks.workflow.dispatch`)."""

    START = "start"
    HOP = "hop"
    SYNTHESIZE = "synthesize"
    DELIVER = "deliver"
    DONE = "done"


@dataclass(frozen=True)
class Next:
    """What to run after a step: a hop's retrievals (+ reducer), synthesis, deliveries, or nothing."""

    kind: NextKind
    hop: int = 0
    slots: tuple[tuple[int, str], ...] = ()  # (sub-query index, engine) pairs of the hop
    deliveries: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "hop": self.hop, "slots": [list(s) for s in self.slots],
                "deliveries": list(self.deliveries)}


def hop_slots(queries: list[dict[str, Any]], engines: list[str],
              tools: list[dict[str, Any]] | None = None) -> tuple[tuple[int, str], ...]:
    """The hop's chord slots: every sub-query × engine, then one slot per planned tool call. The `entities`
    engine searches only the hop's entity sub-query (seeded by the graded evidence), and that sub-query
    only it: one slot, not one per sub-query. That slot takes the place of the other engines for the hop's
    later sub-queries, which then search the first (lexical) engine only: the hop costs no more calls."""
    seeded = any(q.get("kind") == QueryKind.ENTITIES for q in queries)
    searches = tuple((i, e) for i, q in enumerate(queries) for j, e in enumerate(engines)
                     if (q.get("kind") == QueryKind.ENTITIES) == (e == ENTITY_ENGINE)
                     and (not seeded or i == 0 or j == 0 or e == ENTITY_ENGINE))
    return searches + tuple((0, tool_engine(str(t["name"]))) for t in tools or [])


def hop_marker(inv_id: str, number: int) -> str:
    """The once-marker of a hop's charge (`RedisState.charge_once`, `slots_begin(charge_hop=...)`): a
    redelivered step, or a step and the hop's searches, never charge the hop twice."""
    return f"{inv_id}:hop-charged:{number}"
