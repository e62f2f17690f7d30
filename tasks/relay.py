"""The inline executor's hand-offs between the steps of one investigation run in one process.

A Celery step reads what it needs from the database and Redis, since the step before may have run anywhere.
The inline executor (`tasks.inline`) runs every step of an investigation in this process, so each step can
hand the next what it already holds. `Relay` carries all of it; a step given none runs the Celery path:

- `known`: what the last step left in the database (`Known`), so the next reads only what another process
  may have changed since — the investigation's status and the hop's state (`repo.step_state`);
- `events`: the hop's search events, written in its reduction's transaction instead of their own;
- `gathered`: what the round trip that parked the hop's results read for its reducer (`slots_end`), when
  the searches were every slot of the hop (`whole_hop`);
- and, being there at all, that a hop's charge rides on its searches' first round trip (`hop_marker`)
  instead of a round trip of the step that planned it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from investigation.state import Evidence
from storage import repositories as repo
from storage.redis_state import Gathered
from tasks.facts import Facts, HopFacts


@dataclass(frozen=True, slots=True)
class Known:
    """What a step of this process left in the database once it committed, as the next step would read it
    back: the investigation's columns (`facts`), its hops in order, and its evidence in `list_evidence`'s
    order (hop,
    then score descending, then the order written)."""

    facts: Facts
    hops: tuple[HopFacts, ...]
    evidence: tuple[Evidence, ...]

    def hop(self, number: int) -> HopFacts | None:
        return next((h for h in self.hops if h.number == number), None)


@dataclass
class Relay:
    """What one step of an inline run hands the next (see the module's docstring)."""

    known: Known | None = None
    events: list[repo.NewEvent] = field(default_factory=list)
    gathered: Gathered | None = None
    whole_hop: bool = False

    def start_hop(self, *, whole: bool) -> None:
        """A hop's searches begin: nothing of the hop before is handed on (`whole`: they are every slot)."""
        self.events, self.gathered, self.whole_hop = [], None, whole

    def take_known(self) -> Known | None:
        """What the last step wrote, handed once: a step that hands nothing on leaves nothing behind."""
        known, self.known = self.known, None
        return known

    def take_events(self) -> list[repo.NewEvent]:
        events, self.events = self.events, []
        return events

    def planned(self, facts: Facts, hop: HopFacts) -> None:
        """A step planned `hop` (saved and committed, as read back) of the investigation `facts` describe."""
        self.known = Known(facts, (hop,), ())


def evidence_after(
    evidence: Sequence[Evidence], new: Sequence[Evidence], inserted: int
) -> tuple[Evidence, ...] | None:
    """The evidence `list_evidence` reads once `new` has been written (`repo.add_evidence`, which inserted
    `inserted` rows) after `evidence` (in its order). None when that cannot be known for sure: a row of `new`
    not inserted (its id was taken: the stored row is another), or a score the database would not give back as
    it is (SQLite stores -0.0 as 0.0 and NaN as NULL)."""
    first: dict[str, Evidence] = {}
    for e in new:  # as `add_evidence`: one row per id, the first
        first.setdefault(e.id, e)
    if inserted != len(first) or not all(reads_back(e.score) for e in first.values()):
        return None
    # A stable sort: rows of equal hop and score stay in the order written (the database's id order).
    return tuple(sorted([*evidence, *first.values()], key=lambda e: (e.hop, -e.score)))


def reads_back(score: float) -> bool:
    """Whether a REAL column gives `score` back as it is: not NaN or an infinity, not -0.0."""
    return math.isfinite(score) and (score != 0 or math.copysign(1.0, score) > 0)
