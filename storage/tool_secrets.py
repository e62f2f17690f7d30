"""A tool's secret at rest: sealed with the channel secrets' `SecretBox` (as ``{"secret": ...}``),
opened only inside the tool task. Never logged, never shown, never in task arguments."""

from __future__ import annotations

from config.settings import Settings
from storage.secrets import SecretBox


def seal_secret(settings: Settings, secret: str) -> str:
    return SecretBox.from_settings(settings).seal({"secret": secret})


def open_secret(settings: Settings, token: str) -> str | None:
    if not token:
        return None
    return SecretBox.from_settings(settings).open(token).get("secret")
