"""The outbound guard: every spelling of a forbidden address refused, allowlists, and resolution rules."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from adapters.delivery.outbound import (
    OutboundGuard,
    OutboundRefused,
    UnresolvableHost,
    canonical_host,
    parse_ip,
    why_forbidden,
)

FORBIDDEN = [
    "127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "127.1", "0177.1", "127.0.0.1.",
    "10.0.0.1", "012.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "0xa9.0xfe.0xa9.0xfe",
    "0.0.0.0", "0", "100.64.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
    "::1", "[::1]", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1",
    "[::ffff:169.254.169.254]", "::ffff:7f00:1", "64:ff9b::10.0.0.1", "2002:7f00:1::1", "::127.0.0.1",
    "fec0::1", "feff:ffff::1",  # site-local (fec0::/10): `is_global` calls it global
]
PUBLIC = ["8.8.8.8", "134744072", "1.1.1.1", "2001:4860:4860::8888", "::ffff:8.8.8.8", "93.184.216.34"]


@pytest.mark.parametrize("host", FORBIDDEN)
def test_every_spelling_of_a_forbidden_address_is_refused(host: str) -> None:
    address = parse_ip(host)
    assert address is not None and why_forbidden(address) is not None
    with pytest.raises(OutboundRefused, match="allow-host"):
        OutboundGuard().check_url(
            f"http://{host if ':' not in host or host.startswith('[') else f'[{host}]'}/x"
        )


@pytest.mark.parametrize("host", PUBLIC)
def test_public_addresses_pass(host: str) -> None:
    address = parse_ip(host)
    assert address is not None and why_forbidden(address) is None
    OutboundGuard().check_host(host, 443)


@pytest.mark.parametrize("name", ["localhost", "LOCALHOST.", "api.localhost"])
def test_localhost_names_are_refused_without_resolving(name: str) -> None:
    def never(host: str, port: int) -> list[str]:
        raise AssertionError("must not resolve")

    with pytest.raises(OutboundRefused, match="loopback"):
        OutboundGuard(resolver=never).check_host(name, 80)
    with pytest.raises(OutboundRefused):
        OutboundGuard(resolver=never).pin(name, 80)


def fake_dns(table: dict[str, list[str]]) -> Callable[[str, int], list[str]]:
    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError("Name or service not known")
        return table[host]
    return resolve


def test_names_resolving_to_forbidden_addresses_are_refused_at_intake_and_send_time() -> None:
    guard = OutboundGuard(
        resolver=fake_dns(
            {
                "evil.example": ["127.0.0.1"],
                "mixed.example": ["8.8.8.8", "10.1.2.3"],
                "ok.example": ["93.184.216.34"],
            }
        )
    )
    for name in ("evil.example", "mixed.example"):  # one private answer taints the name (rebinding lists)
        with pytest.raises(OutboundRefused):
            guard.check_url(f"https://{name}/hook")
        with pytest.raises(OutboundRefused):
            guard.pin(name, 443)
    assert guard.pin("ok.example", 443) == "93.184.216.34"
    guard.check_url("https://unknown.example/hook")  # does not resolve now: the send-time check decides
    with pytest.raises(UnresolvableHost):
        guard.pin("unknown.example", 443)


def test_allowlist_opens_a_name_or_an_address_in_any_spelling() -> None:
    dns = fake_dns({"relay.internal": ["10.0.0.25"], "other.internal": ["10.0.0.26"]})
    by_name = OutboundGuard.for_hosts(["Relay.Internal."], resolver=dns)
    assert by_name.pin("relay.internal", 25) == "10.0.0.25"
    with pytest.raises(OutboundRefused):
        by_name.pin("other.internal", 25)
    by_address = OutboundGuard.for_hosts(["2130706433"], resolver=dns)  # stored as 127.0.0.1
    assert canonical_host("2130706433") == "127.0.0.1" and canonical_host("[::1]") == "::1"
    assert by_address.pin("0x7f.1", 80) == "127.0.0.1"
    by_address.check_url("http://127.0.0.1:8080/h")
    with pytest.raises(OutboundRefused):
        by_address.check_url("http://127.0.0.2/h")


def test_operator_override_allows_everything() -> None:
    OutboundGuard(allow_private=True).check_url("http://169.254.169.254/latest/meta-data")


@pytest.mark.parametrize(
    "url", ["ftp://8.8.8.8/x", "file:///etc/passwd", "http:///nohost", "http://8.8.8.8:99999/"]
)
def test_unusable_urls_are_refused(url: str) -> None:
    with pytest.raises(OutboundRefused):
        OutboundGuard().check_url(url)
