"""`sleuth secrets generate-key|rotate`: the key encrypting stored secrets (webhook signing secrets,
channel secrets, tool secrets) and its rotation; the procedure is in docs/production.md."""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer
from cryptography.fernet import Fernet
from rich.console import Console

from config.settings import Settings, get_settings

secrets_app = typer.Typer(
    no_args_is_help=True, help="The key encrypting stored secrets: generate one, rotate."
)


@secrets_app.command("generate-key")
def generate_key() -> None:
    """Print a new key for SLEUTH_SECRET_KEY (Fernet: urlsafe base64 of 32 random bytes)."""
    print(Fernet.generate_key().decode("ascii"))


@secrets_app.command("rotate")
def rotate(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Re-encrypt every stored secret under the current key, in one transaction.

    With SLEUTH_SECRET_KEY (or SLEUTH_SECRET_KEY_FILE): run it with the new key there and the old one in
    SLEUTH_SECRET_KEY_PREVIOUS; afterwards the old key can be dropped. In the embedded setup (the key in
    SLEUTH_HOME/secret.key) a new key is generated and replaces the file once every secret is under it."""
    counts = run_rotate(get_settings())
    if as_json:
        print(json.dumps(counts))
        return
    console = Console(stderr=True)
    console.print("re-encrypted under the current key: " + ", ".join(f"{n} {t}" for t, n in counts.items()))


def run_rotate(settings: Settings) -> dict[str, int]:
    """Rotate as `sleuth secrets rotate` does; {table: secrets re-encrypted}."""
    from bootstrap import Services
    from storage.secrets import (
        KEY_FILE,
        NEXT_KEY_FILE,
        SecretBox,
        rotate_stored_secrets,
        settings_keys,
        uses_home_key,
    )

    services = Services(settings)
    if not uses_home_key(settings):
        with services.session() as session:
            return rotate_stored_secrets(session, services.secret_box())
    current, *previous = settings_keys(settings)  # the home key, and a next key left by a rotation cut short
    following = settings.home / NEXT_KEY_FILE
    if following.exists():
        new = following.read_bytes().strip()
    else:
        new = Fernet.generate_key()
        fd = os.open(following, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(new)
    # The next key is on disk before any secret is sealed with it, and every process reads it as a second
    # key meanwhile (storage.secrets.settings_keys): a rotation cut short at any point loses nothing.
    with services.session() as session:
        counts = rotate_stored_secrets(session, SecretBox(new, current, *[k for k in previous if k != new]))
    os.replace(following, settings.home / KEY_FILE)
    return counts
