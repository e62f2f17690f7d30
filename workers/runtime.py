"""Per-process runtime of a worker: the settings it was started with and its `Services`, rebuilt after fork."""

from __future__ import annotations

from celery.signals import worker_process_init

from bootstrap import Services
from config.settings import Settings, get_settings

_settings: Settings | None = None
_services: Services | None = None


def configure(settings: Settings) -> None:
    global _settings, _services
    _settings = settings
    _services = None


def settings() -> Settings:
    """The settings this process's Celery app was built with."""
    return _settings or get_settings()


def services() -> Services:
    """This process's services (clients are created lazily, so a forked child builds its own)."""
    global _services
    if _services is None:
        _services = Services(_settings or get_settings())
    return _services


@worker_process_init.connect
def _reset_after_fork(**_: object) -> None:
    # Connections inherited from the parent process must never be shared with a child.
    global _services
    _services = None
