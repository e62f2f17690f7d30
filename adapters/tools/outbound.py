"""The outbound guard tool calls go through (SSRF): the deliveries' guard (`adapters.delivery.outbound`),
so private, loopback and link-local targets are refused unless the tenant's allowlist names the host, and
every request is pinned to the address that was checked (no DNS rebinding between check and connect).
"""

from __future__ import annotations

from collections.abc import Iterable

import httpx

from adapters.delivery.outbound import GuardedTransport, OutboundGuard, OutboundRefused

__all__ = ["OutboundRefused", "guard_for", "guarded_transport"]


def guard_for(allow_hosts: Iterable[str], *, allow_private: bool = False) -> OutboundGuard:
    """The tenant's outbound guard (its allowlisted hosts open private/loopback targets)."""
    return OutboundGuard.for_hosts(allow_hosts, allow_private=allow_private)


def guarded_transport(guard: OutboundGuard) -> httpx.BaseTransport:
    """An httpx transport pinning every request (redirects are not followed) to a checked address."""
    return GuardedTransport(guard)
