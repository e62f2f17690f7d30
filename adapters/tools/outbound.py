"""The outbound guard tool calls go through (SSRF): private, loopback and link-local targets are refused
unless the tenant's allowlist names the host. One seam (`guard_for`, `guarded_transport`) so the tools use
the same guard as deliveries.

TEMPORARY: a small local guard until `adapters.delivery.outbound` lands on main; then these two
functions return its `OutboundGuard` / `GuardedTransport`.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from investigation.errors import PermanentError


class OutboundRefused(PermanentError):
    """Raised when a tool URL is (or resolves to) an address Sleuth must not connect to."""


@dataclass(frozen=True)
class _Guard:
    allow_hosts: frozenset[str]
    allow_private: bool = False

    def _forbidden(self, host: str) -> str | None:
        try:
            addresses = [ipaddress.ip_address(host.strip("[]"))]
        except ValueError:
            if host in ("localhost",) or host.endswith(".localhost"):
                return "a loopback name"
            try:
                addresses = [ipaddress.ip_address(info[4][0]) for info in
                             socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)]
            except OSError:
                return None
        for address in addresses:
            if not address.is_global:
                return f"{address}: a private, loopback or link-local address"
        return None

    def check_url(self, url: str, *, resolve: bool = True) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise OutboundRefused("only http and https targets are allowed")
        host = (parts.hostname or "").lower().rstrip(".")
        if self.allow_private or host in self.allow_hosts:
            return
        reason = self._forbidden(host) if resolve or host == "localhost" else None
        if reason:
            raise OutboundRefused(f"{host} is {reason}; allow it with `sleuth tenants update TENANT "
                                  f"--allow-host {host}`")


def guard_for(allow_hosts: Iterable[str], *, allow_private: bool = False) -> _Guard:
    """The tenant's outbound guard (its allowlisted hosts open private/loopback targets)."""
    return _Guard(frozenset(h.lower().rstrip(".") for h in allow_hosts), allow_private)


def guarded_transport(guard: _Guard) -> httpx.BaseTransport:
    """An httpx transport checking every request (redirects included) against `guard`."""

    class _Checked(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            guard.check_url(str(request.url))
            return super().handle_request(request)

    return _Checked()
