"""A tool's secret at rest: sealed like channel secrets (Fernet, JSON ``{"secret": ...}``), opened only
inside the tool task. Never logged, never shown, never in task arguments.

TEMPORARY: a key file under SLEUTH_HOME (``secret.key``, mode 0600, the channel secrets' format) until
`storage.secrets.SecretBox` lands on main; then these two functions call it.
"""

from __future__ import annotations

import json
import os

from cryptography.fernet import Fernet, InvalidToken

from config.settings import Settings
from investigation.errors import PermanentError

KEY_FILE = "secret.key"


def _fernet(settings: Settings) -> Fernet:
    home = settings.home
    home.mkdir(parents=True, exist_ok=True)
    path = home / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return Fernet(path.read_bytes().strip())
    with os.fdopen(fd, "wb") as handle:
        handle.write(Fernet.generate_key())
    return Fernet(path.read_bytes().strip())


def seal_secret(settings: Settings, secret: str) -> str:
    return _fernet(settings).encrypt(json.dumps({"secret": secret}).encode()).decode("ascii")


def open_secret(settings: Settings, token: str) -> str | None:
    if not token:
        return None
    try:
        return str(json.loads(_fernet(settings).decrypt(token.encode("ascii")))["secret"])
    except InvalidToken as exc:
        raise PermanentError("a tool secret cannot be decrypted: was the secret key changed?") from exc
