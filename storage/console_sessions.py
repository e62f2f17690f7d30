"""Operator-console sessions kept server-side in Redis, so that signing out or rotating a key ends them,
and the single-use marks of `sleuth trace` links.

A session is a random id (the browser's cookie holds it, Redis holds only its sha256) mapped to its
tenant, its scope (a full console, or one investigation's trace, read-only), its CSRF token and the tag of
the API key it was made with. Every key expires with the session; a per-tenant set lets a key rotation end
all of the tenant's sessions at once.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import asdict, dataclass

import redis

# KEYS: the session, the tenant's set. ARGV: record, ttl, session digest. The tenant's set lives as long as
# its longest session (never shortened by a shorter one; EXPIRE GT needs Redis 7, the embedded one is 6.2).
_CREATE = """
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
if redis.call('TTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
return 1
"""
SCOPE_CONSOLE = "console"
SCOPE_TRACE = "trace"


@dataclass(frozen=True)
class ConsoleSession:
    """What a live session may do: `scope` console (every page) or trace (`investigation_id` only)."""

    tenant_id: str
    key_tag: str
    scope: str
    csrf: str
    investigation_id: str | None = None

    def may_open(self, investigation_id: str) -> bool:
        return self.scope == SCOPE_CONSOLE or self.investigation_id == investigation_id

    @property
    def full(self) -> bool:
        """A full console session: the list page and actions (Redeliver) are open to it."""
        return self.scope == SCOPE_CONSOLE


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


class ConsoleSessions:
    """Sessions under ``{prefix}:console:session:{sha256(id)}``, a tenant's under
    ``{prefix}:console:tenant:{tenant}``, used link nonces under ``{prefix}:console:link:{nonce}``."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self._create = client.register_script(_CREATE)

    def _session_key(self, session_id: str) -> str:
        return f"{self.prefix}:console:session:{_digest(session_id)}"

    def _tenant_key(self, tenant_id: str) -> str:
        return f"{self.prefix}:console:tenant:{tenant_id}"

    def create(self, *, tenant_id: str, key_tag: str, scope: str, ttl_seconds: int,
               investigation_id: str | None = None) -> tuple[str, ConsoleSession]:
        """A new session; returns its id (for the cookie, never stored as such) and its record."""
        if scope not in (SCOPE_CONSOLE, SCOPE_TRACE) or (scope == SCOPE_TRACE and not investigation_id):
            raise ValueError(f"bad session scope {scope!r}")
        session_id = secrets.token_urlsafe(32)
        record = ConsoleSession(tenant_id=tenant_id, key_tag=key_tag, scope=scope,
                                csrf=secrets.token_urlsafe(32), investigation_id=investigation_id)
        self._create(keys=[self._session_key(session_id), self._tenant_key(tenant_id)],
                     args=[json.dumps(asdict(record)), int(ttl_seconds), _digest(session_id)])
        return session_id, record

    def get(self, session_id: str) -> ConsoleSession | None:
        """The live session with this id; None when unknown, ended or expired."""
        if not session_id:
            return None
        raw = self.client.get(self._session_key(session_id))
        if raw is None:
            return None
        try:
            return ConsoleSession(**json.loads(raw))
        except (ValueError, TypeError):
            return None

    def end(self, session_id: str) -> None:
        """Sign out: the id stops working at once, on every API replica."""
        record = self.get(session_id)
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(self._session_key(session_id))
        if record is not None:
            pipe.srem(self._tenant_key(record.tenant_id), _digest(session_id))
        pipe.execute()

    def end_tenant(self, tenant_id: str) -> int:
        """End every session of a tenant (its API key was rotated); returns how many were live."""
        digests = [d.decode() if isinstance(d, bytes) else str(d)
                   for d in self.client.smembers(self._tenant_key(tenant_id))]
        keys = [f"{self.prefix}:console:session:{d}" for d in digests]
        pipe = self.client.pipeline(transaction=True)
        if keys:
            pipe.delete(*keys)
        pipe.delete(self._tenant_key(tenant_id))
        results = pipe.execute()
        return int(results[0]) if keys else 0

    def consume_link(self, nonce: str, ttl_seconds: int) -> bool:
        """Mark a link's nonce used; True for the first caller only (one atomic SET NX, so two browsers
        opening the same link at once cannot both get a session). The mark outlives the link itself."""
        if not nonce:
            return False
        return bool(self.client.set(f"{self.prefix}:console:link:{nonce}", "1", nx=True,
                                    ex=max(1, int(ttl_seconds))))
