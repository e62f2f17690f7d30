"""Outbound safety (SSRF): which addresses Sleuth may connect to when it delivers, and connections pinned
to the address that was checked.

Refused by default: private, loopback, link-local, multicast, reserved, unspecified and shared (CGNAT)
addresses, IPv4 and IPv6, whatever the spelling (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``,
``[::ffff:127.0.0.1]``, NAT64 / 6to4 / Teredo forms), ``localhost`` names, and any name that resolves to
one of them. A tenant's allowlist opens specific hosts (a name, or an address in any spelling).

`OutboundGuard.check_url` is the intake check; `OutboundGuard.pin` is the send-time check: it resolves
the name once, refuses if any address is forbidden, and returns the address to connect to, so nothing
can re-resolve to another address between the check and the connection (DNS rebinding).
`GuardedTransport` applies `pin` to every HTTP request (redirects included, as each hop is a request);
`adapters.delivery.email` pins SMTP connections the same way.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from investigation.errors import PermanentError, TransientError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_V4_PART = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")
ALLOW_HINT = "allow it with `sleuth tenants update TENANT --allow-host HOST`"


class OutboundRefused(PermanentError):
    """Raised when a delivery target is (or resolves to) an address Sleuth must not connect to."""


class UnresolvableHost(TransientError):
    """Raised at send time when a target's name does not resolve (DNS may come back)."""


def parse_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in any inet_aton spelling (``a``, ``a.b``, ``a.b.c``, ``a.b.c.d``; each part
    decimal, ``0``-prefixed octal or ``0x`` hex), or None when `text` is not one."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(_V4_PART.fullmatch(p) for p in parts):
        return None
    values = []
    for part in parts:
        if part[:2].lower() == "0x":
            values.append(int(part[2:] or "0", 16))
        elif part.startswith("0") and len(part) > 1:
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for v in head:
        number = number * 256 + v
    number = number * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(number)


def normalize_host(host: str) -> str:
    """Lower-case, no brackets, no trailing dot."""
    return host.strip().strip("[]").rstrip(".").lower()


def parse_ip(host: str) -> IPAddress | None:
    """The address `host` spells (any IPv4 form, IPv6 with or without brackets/zone), or None for a name."""
    host = normalize_host(host)
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return None
    return parse_ipv4(host)


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    # IPv4-compatible (deprecated) ::a.b.c.d
    if int(address) >> 32 == 0 and int(address) > 1:
        return ipaddress.IPv4Address(int(address))
    return None


def why_forbidden(address: IPAddress) -> str | None:
    """Why Sleuth must not connect to `address` ("a loopback address"...), or None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_v4(address)
        if inner is not None:
            reason = why_forbidden(inner)
            return f"{reason} (embedded in {address})" if reason else None
    checks = (("is_unspecified", "an unspecified address"), ("is_loopback", "a loopback address"),
              ("is_link_local", "a link-local address"), ("is_multicast", "a multicast address"),
              ("is_private", "a private address"), ("is_reserved", "a reserved address"))
    for attribute, reason in checks:
        if getattr(address, attribute):
            return reason
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED:
        return "a shared (carrier-grade NAT) address"
    # fec0::/10: deprecated (RFC 3879) yet still routed inside some networks, and `is_global` calls it global.
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "a site-local address"
    if not address.is_global:
        return "not a public address"
    return None


def system_resolver(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (TCP), in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class OutboundGuard:
    """The outbound policy of one tenant: forbidden ranges refused unless the host is allowlisted."""

    allow_hosts: frozenset[str] = frozenset()
    allow_private: bool = False  # operator override (SLEUTH_WEBHOOK_ALLOW_PRIVATE)
    resolver: Resolver = field(default=system_resolver, compare=False, repr=False)

    @classmethod
    def for_hosts(cls, hosts: Iterable[str], *, allow_private: bool = False,
                  resolver: Resolver = system_resolver) -> OutboundGuard:
        return cls(frozenset(canonical_host(h) for h in hosts), allow_private, resolver)

    def allowed(self, host: str, address: IPAddress | None = None) -> bool:
        """True when the tenant's allowlist names `host` (or `address`, in any spelling)."""
        if self.allow_private or canonical_host(host) in self.allow_hosts:
            return True
        return address is not None and str(address) in self.allow_hosts

    def _refuse(self, host: str, address: IPAddress, reason: str) -> OutboundRefused:
        shown = host if str(address) == normalize_host(host) else f"{host} ({address})"
        return OutboundRefused(f"{shown} is {reason}; {ALLOW_HINT}")

    def check_host(self, host: str, port: int, *, resolve: bool = True) -> None:
        """The intake check: refuse a forbidden literal, a localhost name, or a name resolving to a
        forbidden address. A name that does not resolve now passes (the send-time check decides)."""
        host = normalize_host(host)
        if not host:
            raise OutboundRefused("the target has no host")
        if self.allowed(host):
            return
        literal = parse_ip(host)
        if literal is not None:
            reason = why_forbidden(literal)
            if reason and not self.allowed(host, literal):
                raise self._refuse(host, literal, reason)
            return
        if host == "localhost" or host.endswith(".localhost"):
            raise OutboundRefused(f"{host} is a loopback name; {ALLOW_HINT}")
        if resolve:
            try:
                self.pin(host, port)
            except UnresolvableHost:
                return

    def check_url(self, url: str, *, resolve: bool = True) -> None:
        """`check_host` for an http(s) URL."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise OutboundRefused("only http and https targets are allowed")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as exc:
            raise OutboundRefused(f"bad port in {url!r}") from exc
        self.check_host(parts.hostname or "", port, resolve=resolve)

    def pin(self, host: str, port: int) -> str:
        """The send-time check: the address to connect to for `host` (resolved once, every address
        checked). Raises `OutboundRefused` or `UnresolvableHost`."""
        name = normalize_host(host)
        literal = parse_ip(name)
        if literal is not None:
            candidates: list[IPAddress] = [literal]
        else:
            if (name == "localhost" or name.endswith(".localhost")) and not self.allowed(name):
                raise OutboundRefused(f"{name} is a loopback name; {ALLOW_HINT}")
            try:
                resolved = self.resolver(name, port)
            except (OSError, UnicodeError) as exc:
                raise UnresolvableHost(f"could not resolve {name}: {exc}") from exc
            candidates = [a for a in (parse_ip(r) for r in resolved) if a is not None]
            if not candidates:
                raise UnresolvableHost(f"{name} resolved to no address")
        for address in candidates:  # one forbidden answer taints the name: rebinding hides behind lists
            reason = why_forbidden(address)
            if reason and not self.allowed(name, address):
                raise self._refuse(name, address, reason)
        return str(candidates[0])


def canonical_host(host: str) -> str:
    """How an allowlist entry is stored: an address in its standard spelling, or a lower-case name."""
    address = parse_ip(host)
    return str(address) if address is not None else normalize_host(host)


class GuardedTransport(httpx.BaseTransport):
    """An httpx transport that pins every request to the address `guard.pin` checked.

    The URL's host is replaced by the checked address; the ``Host`` header keeps the name and TLS uses
    it for SNI and certificate checks (httpcore's ``sni_hostname`` extension).
    """

    def __init__(self, guard: OutboundGuard, inner: httpx.BaseTransport | None = None) -> None:
        self._guard = guard
        self._inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        port = request.url.port or (443 if request.url.scheme == "https" else 80)
        address = self._guard.pin(host, port)
        if address != normalize_host(host):
            request.url = request.url.copy_with(host=address)
            if request.url.scheme == "https":
                request.extensions = {**request.extensions, "sni_hostname": host}
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


__all__ = ["GuardedTransport", "OutboundGuard", "OutboundRefused", "UnresolvableHost", "canonical_host",
           "normalize_host", "parse_ip", "parse_ipv4", "system_resolver", "why_forbidden"]
