"""A removed tenant's Redis state: every key under the prefix that names one of its ids (the tenant's, its
investigations', its sources') as a `:`-separated part goes, and such ids leave the sets, sorted sets and
hashes shared by tenants (the fairness registry). The broker's keys (`<prefix>:celery:`) are not Sleuth's to
edit: a queued step of a removed investigation finds no row and ends."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis

SCAN_COUNT = 1000


def _parts(value: Any) -> set[str]:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return set(text.split(":"))


def purge_keys(client: redis.Redis, prefix: str, ids: Iterable[str]) -> int:
    """Remove the keys and shared members naming any of `ids`; returns how many keys and members went."""
    wanted = {i for i in ids if i}
    broker = f"{prefix}:celery:".encode()
    removed = 0
    for key in client.scan_iter(match=f"{prefix}:*", count=SCAN_COUNT):
        if key.startswith(broker):
            continue
        if _parts(key) & wanted:
            removed += int(client.delete(key))
            continue
        kind = client.type(key)
        kind = kind.decode() if isinstance(kind, bytes) else kind
        if kind == "set":
            members = [m for m in client.smembers(key) if _parts(m) & wanted]
            removed += int(client.srem(key, *members)) if members else 0
        elif kind == "zset":
            ranked: list[Any] = list(client.zrange(key, 0, -1))
            members = [m for m in ranked if _parts(m) & wanted]
            removed += int(client.zrem(key, *members)) if members else 0
        elif kind == "hash":
            fields = [f for f in client.hkeys(key) if _parts(f) & wanted]
            removed += int(client.hdel(key, *fields)) if fields else 0
    return removed


def keys_naming(client: redis.Redis, prefix: str, ids: Iterable[str]) -> list[str]:
    """Keys and shared members still naming any of `ids` (what a removal must leave empty)."""
    wanted = {i for i in ids if i}
    found = []
    for key in client.scan_iter(match=f"{prefix}:*", count=SCAN_COUNT):
        name = key.decode("utf-8", "replace")
        if _parts(key) & wanted:
            found.append(name)
            continue
        kind = client.type(key)
        kind = kind.decode() if isinstance(kind, bytes) else kind
        members: list[Any] = []
        if kind == "set":
            members = list(client.smembers(key))
        elif kind == "zset":
            members = list(client.zrange(key, 0, -1))
        elif kind == "hash":
            members = list(client.hkeys(key))
        elif kind == "list":
            members = list(client.lrange(key, 0, -1))
        elif kind == "string":
            members = [client.get(key) or b""]
        found += [f"{name} ∋ {m!r}" for m in members
                  if _parts(m) & wanted or any(i.encode() in bytes(m) for i in wanted)]
    return found
