"""Secrets at rest (channel secrets, tools' secrets, tenants' webhook signing secrets): Fernet
(AES-128-CBC + HMAC-SHA256) under the key of ``SLEUTH_SECRET_KEY`` or ``SLEUTH_SECRET_KEY_FILE``, or, in
the embedded setup, a key generated once under ``SLEUTH_HOME/secret.key`` (mode 0600).

Keys rotate (`sleuth secrets rotate`, docs/production.md): the box holds the current key first and the
previous ones after it (`MultiFernet`), seals with the first, opens with any, and `rotate_stored_secrets`
re-encrypts every stored secret under the first in one transaction, after which the old keys can go.
Only `SecretBox` ever sees plaintext; callers hold it as briefly as they can and never log it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import Table, select, update
from sqlmodel import Session

from config.settings import Settings
from investigation.errors import PermanentError, ValidationFailed
from storage._common import write
from storage.models import Channel, Tenant, ToolRecord

KEY_FILE = "secret.key"
# The embedded key being rotated in: written before the re-encryption, renamed over KEY_FILE after it, and
# read as a second key meanwhile, so a rotation cut short leaves every secret readable.
NEXT_KEY_FILE = "secret.key.next"


class SecretKeyError(PermanentError):
    """Raised when stored secrets cannot be decrypted with the configured key (wrong or rotated key)."""


def fernet_key(material: str) -> bytes:
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


def _file_key(path: Path) -> bytes:
    try:
        return fernet_key(path.read_text())
    except OSError as exc:
        raise ValidationFailed("SLEUTH_SECRET_KEY_FILE", f"cannot read {path}: {exc.strerror}") from exc


def uses_home_key(settings: Settings) -> bool:
    """Whether the key is the one generated under SLEUTH_HOME (neither SLEUTH_SECRET_KEY nor a key file)."""
    return settings.security.secret_key is None and settings.security.secret_key_file is None


def settings_keys(settings: Settings) -> list[bytes]:
    """The keys of `settings`, the current one first, then the previous ones (SLEUTH_SECRET_KEY_PREVIOUS)."""
    if settings.security.secret_key is not None:
        keys = [fernet_key(settings.security.secret_key.get_secret_value())]
    elif settings.security.secret_key_file is not None:
        keys = [_file_key(settings.security.secret_key_file)]
    else:
        keys = [_home_key(settings.home)]
        following = settings.home / NEXT_KEY_FILE
        if following.exists():
            keys.append(following.read_bytes().strip())
    if settings.security.secret_key_previous is not None:
        keys += [
            fernet_key(k)
            for k in settings.security.secret_key_previous.get_secret_value().split(",")
            if k.strip()
        ]
    return keys


class SecretBox:
    """Encrypts and decrypts secrets: a small str → str mapping (`seal`/`open`) or one string."""

    def __init__(self, key: bytes, *previous: bytes) -> None:
        self._fernet = MultiFernet([Fernet(k) for k in (key, *previous)])

    @classmethod
    def from_settings(cls, settings: Settings) -> SecretBox:
        first, *rest = settings_keys(settings)
        return cls(first, *rest)

    def seal(self, secrets: dict[str, str]) -> str:
        return self.seal_text(json.dumps(secrets, sort_keys=True))

    def open(self, token: str) -> dict[str, str]:
        if not token:
            return {}
        data = json.loads(self.open_text(token))
        return {str(k): str(v) for k, v in data.items()}

    def seal_text(self, text: str) -> str:
        return self._fernet.encrypt(text.encode()).decode("ascii")

    def open_text(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode()
        except (InvalidToken, UnicodeEncodeError) as exc:
            raise SecretKeyError("stored secrets cannot be decrypted: SLEUTH_SECRET_KEY changed?") from exc

    def rotate(self, token: str) -> str:
        """`token` re-encrypted under the current key (it may have been sealed with any of the box's keys)."""
        try:
            return self._fernet.rotate(token.encode("ascii")).decode("ascii")
        except (InvalidToken, UnicodeEncodeError) as exc:
            raise SecretKeyError("a stored secret cannot be decrypted with any configured key") from exc


# (table, primary key column, sealed column) of every secret Sleuth stores.
_SEALED: tuple[tuple[Table, str, str], ...] = (
    (Tenant.__table__, "id", "webhook_secret"),  # type: ignore[attr-defined]  # SQLModel sets __table__
    (Channel.__table__, "id", "secrets"),  # type: ignore[attr-defined]
    (ToolRecord.__table__, "id", "secret"),  # type: ignore[attr-defined]
)


def rotate_stored_secrets(session: Session, box: SecretBox) -> dict[str, int]:
    """Re-encrypt every stored secret under `box`'s current key, all in one transaction (all or none):
    {table: rows re-encrypted}. SecretKeyError, and nothing changed, when one cannot be opened."""
    counts: dict[str, int] = {}
    with write(session):
        for table, key, column in _SEALED:
            rows = session.connection().execute(select(table.c[key], table.c[column])).all()
            sealed = [(row[0], row[1]) for row in rows if row[1]]
            for row_id, token in sealed:
                session.connection().execute(
                    update(table).where(table.c[key] == row_id).values({column: box.rotate(token)}))
            counts[table.name] = len(sealed)
    return counts


__all__ = ["SecretBox", "SecretKeyError", "rotate_stored_secrets", "settings_keys", "uses_home_key"]
