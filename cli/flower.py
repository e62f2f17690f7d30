"""`sleuth flower`'s command line: Flower's options, with basic auth whenever it listens off loopback, and
on loopback without a password a Host check, so that a web page whose name resolves to 127.0.0.1 (DNS
rebinding) cannot drive it from the operator's browser."""

from __future__ import annotations

import ipaddress
import re
import secrets
from typing import Any

from config.settings import Settings

# What a browser sends to a server on this machine: 127.0.0.1, [::1] or localhost, with or without a port.
_LOOPBACK_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?", re.IGNORECASE)


def is_loopback(address: str) -> bool:
    if address in ("localhost", ""):
        return address == "localhost"  # "" means every interface
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def loopback_host(host: str) -> bool:
    """Whether a request's Host header names this machine's loopback (and nothing else)."""
    return bool(_LOOPBACK_HOST.fullmatch(host))


def flower_argv(settings: Settings, *, port: int, address: str,
                basic_auth: str | None) -> tuple[list[str], tuple[str, str] | None]:
    """Flower's argv, and the (user, password) generated when auth was required but none was given."""
    argv = ["flower", f"--port={port}", f"--address={address}"]
    auth = basic_auth or (
        settings.security.flower_basic_auth.get_secret_value()
        if settings.security.flower_basic_auth
        else None
    )
    generated: tuple[str, str] | None = None
    if auth is None and not is_loopback(address):
        generated = ("admin", secrets.token_urlsafe(12))
        auth = ":".join(generated)
    if auth:
        argv.append(f"--basic-auth={auth}")
    return argv, generated


def check_host_header() -> None:
    """Make the Flower application that `celery flower` builds answer 403 to a request whose Host header
    is not a loopback name. Flower has no option for it; its command builds `flower.command.Flower`, so
    that name is pointed at a subclass that checks the header before routing."""
    import flower.command
    import tornado.web
    from flower.app import Flower

    class LoopbackFlower(Flower):  # type: ignore[misc]  # Flower ships no type information
        def find_handler(self, request: Any, **kwargs: Any) -> Any:
            if not loopback_host(request.host):
                return self.get_handler_delegate(request, tornado.web.ErrorHandler, {"status_code": 403})
            return super().find_handler(request, **kwargs)

    flower.command.Flower = LoopbackFlower
