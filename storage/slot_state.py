"""What a retrieval slot's round trips carry (`RedisState.slots_begin`, `slots_end`): the sub-query cache's
key, what a slot's begin found, what its end parks, what a hop's reducer is handed."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import TypeAdapter, ValidationError

from investigation.state import Passage
from storage.hits import SlotHits

_PASSAGES = TypeAdapter(list[Passage])
log = logging.getLogger(__name__)


def normalise_query(query: str) -> str:
    """The form of a query used for cache keys: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def cache_digest(query: str, k: int, acl: Iterable[str] | None) -> str:
    """sha256 of the normalised query, k and the sorted ACL (JSON-encoded, so no separator is ambiguous)."""
    return _digest(query, int(k), frozenset(acl or ()))


@functools.lru_cache(maxsize=4096)  # a hop's slots ask for theirs before and after searching
def _digest(query: str, k: int, acl: frozenset[str]) -> str:
    material = json.dumps([normalise_query(query), k, sorted(acl)], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheQuery:
    """What a sub-query cache entry is keyed by: the tenant, the engine, the query, k, the ACL terms (audience
    and principals) and the tenant's corpus `version` (the database's, read when the hop was planned:
    `storage._corpus`), so an entry built before an ingest is never read after it, whichever Redis holds
    it."""

    tenant: str
    engine: str
    query: str
    k: int
    acl: tuple[str, ...] | None
    version: int = 0


class SlotOutcome(StrEnum):
    """What `slot_begin` found: the slot's own stored result, the deadline passed, no retrieval call left,
    or a call charged with the cached passages (hit) or none cached (miss)."""

    PARKED = "parked"
    DEADLINE = "deadline"
    BUDGET = "budget"
    HIT = "hit"
    MISS = "miss"


@dataclass(frozen=True)
class SlotBegin:
    """`RedisState.slot_begin`'s answer: `outcome` is parked (the slot's stored result, in `parked`), deadline
    or budget (nothing charged), hit (one call charged; the cached passages in `cached`) or miss (one call
    charged: search); `version` is the corpus version the slot's cache entry was looked up under."""

    outcome: SlotOutcome
    parked: SlotHits | None
    cached: list[Passage] | None
    version: int


@dataclass(frozen=True)
class SlotEnd:
    """One retrieval slot's result to park (`RedisState.slots_end`): with `cache`, its passages are also
    cached under the corpus `version` its begin read."""

    slot: str
    hits: SlotHits
    cache: CacheQuery | None = None
    version: int = 0


@dataclass(frozen=True)
class Gathered:
    """What a hop's reducer reads from Redis once the hop's slots are done (`hop_results`, then `first_seen`),
    read instead by the round trip that parked the results (`slots_end(gather=...)`): every slot's result, the
    budget's usage, the hop's passages (`candidates`, sorted chunk ids) and those first seen at the hop."""

    hits: dict[str, SlotHits]
    usage: dict[str, Any]
    candidates: tuple[str, ...]
    fresh: frozenset[str]


def cached_passages(raw: str | bytes, key: str) -> list[Passage] | None:
    """A sub-query cache entry's passages (None, logged, for an entry that does not read back)."""
    try:
        return _PASSAGES.validate_json(raw)
    except ValidationError as exc:
        log.warning("ignoring an invalid sub-query cache entry %s: %s", key, exc.errors()[:1])
        return None


def parked_hits(raw: str | bytes, where: str) -> SlotHits | None:
    """A slot's parked result (None, logged, for one that does not read back)."""
    try:
        return SlotHits.from_json(raw)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        log.warning("ignoring an invalid parked result of %s: %s", where, str(exc)[:300])
        return None
