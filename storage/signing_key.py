"""The key signing links people open without an API key (`sleuth trace` links, rating links): the configured
``SLEUTH_SESSION_SECRET``, else a random key generated once per SLEUTH_HOME (mode 0600, fine for one host).
Here, below the API, because the deliver task signs the rating links it puts in every answer."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from config.settings import Settings

_key_cache: dict[Path, bytes] = {}


def secret_key(settings: Settings) -> bytes:
    """The signing key: the configured secret, else one generated once per SLEUTH_HOME (mode 0600)."""
    if settings.security.session_secret is not None:
        return settings.security.session_secret.get_secret_value().encode()
    path = (settings.home / "run" / "session.key").resolve()
    if path in _key_cache:
        return _key_cache[path]
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_bytes().strip()
    else:
        key = secrets.token_urlsafe(32).encode()
        with os.fdopen(fd, "wb") as f:
            f.write(key)
    _key_cache[path] = key
    return key
