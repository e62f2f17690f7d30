"""Where an answer may be sent: the checks every callback passes at intake (and again at send time)."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from config.settings import Settings
from investigation.errors import ValidationFailed


def check_callback(callback: dict[str, Any], settings: Settings, *, field: str = "callback") -> None:
    """Refuse a callback Sleuth must not call (ValidationFailed naming the field)."""
    if callback.get("type") == "webhook":
        check_callback_host(str(callback["url"]), settings, field=f"{field}.url")


def check_callback_host(url: str, settings: Settings, *, field: str = "callback.url") -> None:
    """Refuse loopback/private callback hosts unless ``settings.webhook_allow_private`` (SSRF guard)."""
    if settings.webhook_allow_private:
        return
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        raise ValidationFailed(field, "private or loopback hosts are not allowed")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return
    if not address.is_global:
        raise ValidationFailed(field, "private or loopback hosts are not allowed")
