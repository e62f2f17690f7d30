"""Channel secrets at rest: Fernet (AES-128-CBC + HMAC-SHA256) with a key from ``SLEUTH_SECRET_KEY``,
or, in the embedded setup, a key generated once under ``SLEUTH_HOME/secret.key`` (mode 0600).

Only `SecretBox` ever sees plaintext; callers hold the decrypted mapping as briefly as they can (the
deliver task, inside one attempt) and never log it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from config.settings import Settings
from investigation.errors import PermanentError

KEY_FILE = "secret.key"


class SecretKeyError(PermanentError):
    """Raised when stored secrets cannot be decrypted with the configured key (wrong or rotated key)."""


def _fernet_key(material: str) -> bytes:
    """A Fernet key from `material`: used as is when it is one, else derived (sha256) from the phrase."""
    raw = material.strip().encode()
    try:
        if len(base64.urlsafe_b64decode(raw)) == 32:
            return raw
    except ValueError:
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(raw).digest())


def _home_key(home: Path) -> bytes:
    path = home / KEY_FILE
    home.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as handle:  # first process to get here writes it; the others read it
        handle.write(Fernet.generate_key())
    return path.read_bytes().strip()


class SecretBox:
    """Encrypts and decrypts a channel's secrets (a small str → str mapping)."""

    def __init__(self, key: bytes) -> None:
        self._fernet = Fernet(key)

    @classmethod
    def from_settings(cls, settings: Settings) -> SecretBox:
        if settings.secret_key is not None:
            return cls(_fernet_key(settings.secret_key.get_secret_value()))
        return cls(_home_key(settings.home))

    def seal(self, secrets: dict[str, str]) -> str:
        return self._fernet.encrypt(json.dumps(secrets, sort_keys=True).encode()).decode("ascii")

    def open(self, token: str) -> dict[str, str]:
        if not token:
            return {}
        try:
            data = json.loads(self._fernet.decrypt(token.encode("ascii")))
        except InvalidToken as exc:
            raise SecretKeyError("channel secrets cannot be decrypted: SLEUTH_SECRET_KEY changed?") from exc
        return {str(k): str(v) for k, v in data.items()}


__all__ = ["SecretBox", "SecretKeyError"]
