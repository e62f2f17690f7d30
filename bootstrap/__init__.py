"""The composition root: `Services` builds, per process and after fork, every client, engine and provider
the API, the CLI and the workers use, from one `Settings`. Nothing else constructs adapters."""

from bootstrap.services import Services

__all__ = ["Services"]
