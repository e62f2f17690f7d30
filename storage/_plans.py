"""What a retrieval slot reads of its investigation and hop, kept per process: an investigation's tenant,
audience and principals never change after intake, and a planned hop's queries never change (`save_hop`
keeps the first plan), so every slot of a hop after the first reads none of it from the database again.
A hop not planned yet is not cached (it may be committed a moment later). The tenant's corpus version is read
with the plan, once per hop: the hop's cached search results are those built under it."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session

from storage._common import after_commit
from storage._corpus import corpus_version
from storage._owners import BoundedLRU, database_of
from storage._records import get_hop
from storage.models import Investigation

PLANS_CACHED = 4096  # hops kept per process, least recently used out


@dataclass(frozen=True)
class PlannedHop:
    """The parts of an investigation and one of its hops that a retrieval needs; all immutable.
    `corpus_version`: the tenant's, read when the hop was planned (or first read by this process)."""

    tenant_id: str
    audience: str
    principals: tuple[str, ...]
    queries: tuple[str, ...]
    corpus_version: int


_plans: BoundedLRU[tuple[str, str, int], PlannedHop] = BoundedLRU(PLANS_CACHED)
_loading = threading.Lock()


def _new_lock_in_child() -> None:  # a lock some thread held at fork time would stay held in the child
    global _loading
    _loading = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def planned_hop(session: Session, *, investigation_id: str, number: int) -> PlannedHop | None:
    """Hop `number` of the investigation as planned, or None when it has not been planned (or the
    investigation does not exist)."""
    key = (database_of(session), investigation_id, number)
    if (found := _plans.get(key)) is not None:
        return found
    with _loading:  # the slots of a hop start together (threads of the inline executor): one of them reads
        if (found := _plans.get(key)) is not None:
            return found
        return _load(session, key, investigation_id, number)


def _load(
    session: Session, key: tuple[str, str, int], investigation_id: str, number: int
) -> PlannedHop | None:
    inv = session.get(Investigation, investigation_id)
    hop = get_hop(session, investigation_id=investigation_id, number=number)
    if inv is None or hop is None:
        return None
    found = PlannedHop(tenant_id=inv.tenant_id, audience=inv.audience, principals=tuple(inv.principals or ()),
                       queries=tuple(str(q["text"]) for q in hop.queries),
                       corpus_version=corpus_version(session, tenant_id=inv.tenant_id))
    _plans.put(key, found)
    return found


def remember_plan(session: Session, *, investigation_id: str, number: int, tenant_id: str, audience: str,
                  principals: Sequence[str], queries: Sequence[str]) -> None:
    """Keep hop `number` as the step that saves it (`save_hop`'s row: the first plan) planned it, once its
    transaction has committed (never when it rolls back), so a slot in this process reads nothing."""
    key = (database_of(session), investigation_id, number)
    found = PlannedHop(tenant_id=tenant_id, audience=audience, principals=tuple(principals),
                       queries=tuple(queries), corpus_version=corpus_version(session, tenant_id=tenant_id))
    after_commit(session, functools.partial(_plans.put, key, found))


def forget_plans() -> None:
    """Empty this process's cache (tests)."""
    _plans.clear()
