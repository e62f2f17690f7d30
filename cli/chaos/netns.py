"""Hosts on one machine: network namespaces joined by veth pairs to a bridge in the root namespace.

The root namespace is the services host (its address on the bridge reaches Redis, PostgreSQL and the
webhook receiver through `cli.chaos.delay_proxy`); each other host is a namespace with one interface.
`cut` pulls a host's cable at the bridge (its veth's bridge end goes down: packets are dropped silently,
nothing is reset, as when a switch port dies) and `restore` plugs it back. Every name carries the run's own
token, and `destroy` removes what `create` made (processes in the namespaces first), even half-made."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass, field


def _ip(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    argv = ["ip", *(["netns", "exec", ns, "ip"] if ns else []), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=check)


def unavailable() -> str | None:
    """Why network namespaces cannot be made here (None: they can)."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    probe = f"sleuth-probe-{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()[:200]}"
    _ip("netns", "del", probe, check=False)
    return None


def _free_subnet() -> str:
    """A 10.x.y.0/24 no interface of this machine uses (its first three octets)."""
    taken = _ip("-4", "-o", "addr", "show").stdout
    rng = random.Random()
    for _ in range(200):
        prefix = f"10.{rng.randrange(200, 250)}.{rng.randrange(1, 250)}"
        if f" {prefix}." not in taken:
            return prefix
    raise RuntimeError("no free 10.x.y.0/24 subnet for the test topology")


@dataclass
class Topology:
    """A bridge `sb<token>` holding the services address `<prefix>.1`, and one namespace per host."""

    hosts: list[str]
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    prefix: str = ""
    made: list[str] = field(default_factory=list)  # namespaces created so far

    @property
    def bridge(self) -> str:
        return f"sb{self.token}"

    @property
    def services_ip(self) -> str:
        return f"{self.prefix}.1"

    def ns(self, host: str) -> str:
        return f"sleuth-{self.token}-{host}"

    def ip(self, host: str) -> str:
        return f"{self.prefix}.{10 + self.hosts.index(host)}"

    def _port(self, host: str) -> str:
        return f"s{self.token}{self.hosts.index(host)}"  # the bridge end of the host's veth (<= 15 chars)

    def create(self) -> None:
        self.prefix = self.prefix or _free_subnet()
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.services_ip}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for host in self.hosts:
            ns, port, inner = self.ns(host), self._port(host), f"i{self.token}{self.hosts.index(host)}"
            _ip("netns", "add", ns)
            self.made.append(ns)
            _ip("link", "add", port, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", ns)
            _ip("link", "set", inner, "name", "eth0", ns=ns)
            _ip("addr", "add", f"{self.ip(host)}/24", "dev", "eth0", ns=ns)
            _ip("link", "set", "eth0", "up", ns=ns)
            _ip("link", "set", "lo", "up", ns=ns)
            _ip("link", "set", port, "master", self.bridge)
            _ip("link", "set", port, "up")

    def cut(self, host: str) -> None:
        _ip("link", "set", self._port(host), "down")

    def restore(self, host: str) -> None:
        _ip("link", "set", self._port(host), "up")

    def argv(self, host: str, command: list[str]) -> list[str]:
        """`command` run inside the host's namespace."""
        return ["ip", "netns", "exec", self.ns(host), *command]

    def destroy(self) -> list[str]:
        """Kill what still runs in the namespaces, delete them and the bridge; what could not be removed."""
        left: list[str] = []
        for ns in self.made:
            pids = _ip("netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            if _ip("netns", "del", ns, check=False).returncode != 0:
                left.append(ns)
        self.made.clear()
        for host in self.hosts:  # a veth whose namespace was never made keeps its bridge end
            _ip("link", "del", self._port(host), check=False)
        gone = _ip("link", "del", self.bridge, check=False)
        if gone.returncode != 0 and "Cannot find device" not in gone.stderr:
            left.append(self.bridge)
        return left
