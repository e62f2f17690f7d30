"""`sleuth flower`'s command line: Flower's options, with basic auth whenever it listens off loopback."""

from __future__ import annotations

import ipaddress
import secrets

from config.settings import Settings


def is_loopback(address: str) -> bool:
    if address in ("localhost", ""):
        return address == "localhost"  # "" means every interface
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def flower_argv(settings: Settings, *, port: int, address: str,
                basic_auth: str | None) -> tuple[list[str], tuple[str, str] | None]:
    """Flower's argv, and the (user, password) generated when auth was required but none was given."""
    argv = ["flower", f"--port={port}", f"--address={address}"]
    auth = basic_auth or (settings.flower_basic_auth.get_secret_value() if settings.flower_basic_auth else None)
    generated: tuple[str, str] | None = None
    if auth is None and not is_loopback(address):
        generated = ("admin", secrets.token_urlsafe(12))
        auth = ":".join(generated)
    if auth:
        argv.append(f"--basic-auth={auth}")
    return argv, generated
