"""Who owns an investigation or a delivery: its tenant (and a delivery's investigation) never change, so one
bounded, per-process cache in front of the database answers the task dispatch, the log context and the
metrics alike. A missing row is not cached (it may be committed a moment later)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

from sqlmodel import Session

from investigation.errors import NotFound
from storage.models import Delivery, Investigation

K = TypeVar("K")
V = TypeVar("V")

OWNERS_CACHED = 8192  # entries (investigations and deliveries together) kept per process, least recent out


class BoundedLRU(Generic[K, V]):
    """A thread-safe least-recently-used map of at most `size` entries (the per-process caches of rows that
    never change: owners here, planned hops in storage/_plans.py)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def database_of(session: Session) -> str:
    """The cache key part naming the session's database: test databases and a deployment's databases may
    share a process, so ids alone do not identify a row."""
    return str(session.get_bind().engine.url)


_OWNERS: BoundedLRU[tuple[str, str, str], tuple[str, str]] = BoundedLRU(OWNERS_CACHED)


def _key(session: Session, kind: str, item_id: str) -> tuple[str, str, str]:
    return database_of(session), kind, item_id


def investigation_tenant(session: Session, *, investigation_id: str) -> str:
    """The tenant id of an investigation (NotFound when there is none)."""
    key = _key(session, "investigation", investigation_id)
    if (found := _OWNERS.get(key)) is None:
        inv = session.get(Investigation, investigation_id)
        if inv is None:
            raise NotFound(f"investigation {investigation_id} not found")
        found = (investigation_id, inv.tenant_id)
        _OWNERS.put(key, found)
    return found[1]


def delivery_owner(session: Session, *, delivery_id: str) -> tuple[str, str]:
    """(investigation id, tenant id) of a delivery (NotFound when there is none)."""
    key = _key(session, "delivery", delivery_id)
    if (found := _OWNERS.get(key)) is None:
        delivery = session.get(Delivery, delivery_id)
        if delivery is None:
            raise NotFound(f"delivery {delivery_id} not found")
        found = (delivery.investigation_id, delivery.tenant_id)
        _OWNERS.put(key, found)
    return found
