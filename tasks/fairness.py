"""The port through which the task shell asks for tenant fairness, without importing the application ring.

Tenant fairness — the in-flight cap of investigations (`app.admission`) and the running-step cap of steps
(`app.admission_steps`) — is application policy. The shell only needs to ask it a few things: a tenant's
queue priority, that an investigation finished, whether a step may run. `workers.app.create_celery` (the
composition root of every process that builds the Celery app) installs the application's implementation
(`app.fairness.TenantFairness`); a task that runs before one is installed fails loudly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from bootstrap import Services

Launch = Callable[[str], None]  # start an investigation by id (`tasks.workflow.launch`)
Send = Callable[[str], None]  # send a parked step's message again


class Fairness(Protocol):
    """What the shell asks of tenant fairness."""

    def priority(self, services: Services, tenant_id: str) -> int:
        """The queue priority of the tenant's next messages (0 first)."""

    def finished(self, services: Services, tenant_id: str, inv_id: str, launch: Launch) -> list[str]:
        """`inv_id` is terminal: its slot is given back, and a held investigation of the tenant may start."""

    def release_held(self, services: Services, launch: Launch) -> list[str]:
        """Start held investigations of every tenant with room (the watchdog's sweep); their ids."""

    def waiting(self, services: Services, ids: list[str]) -> set[str]:
        """Those of `ids` held back by their tenant's cap or with a parked step: they wait on purpose, and
        are not lost work."""

    def enter(self, services: Services, tenant_id: str) -> bool:
        """Whether a step of the tenant may run now (then it holds a slot until `leave`)."""

    def park(self, services: Services, tenant_id: str, message: str) -> None:
        """Keep a step's message until its tenant has room."""

    def leave(self, services: Services) -> bool:
        """This process's step ended; whether some tenant has parked steps."""

    def release_parked(self, services: Services, send: Send, *, prune: bool = False) -> int:
        """Send parked steps whose tenant has room (`prune`: forget dead processes first); how many."""

    def join(self, services: Services) -> None:
        """A worker process starts: it counts as a slot."""

    def part(self, services: Services) -> None:
        """A worker process ends."""


_installed: list[Fairness] = []


def install(policy: Fairness) -> None:
    """Use `policy` in this process (the composition root does it once; again replaces it)."""
    _installed[:] = [policy]


def fairness() -> Fairness:
    if not _installed:
        raise RuntimeError(
            "no tenant fairness installed: build the Celery app with workers.app.create_celery"
        )
    return _installed[0]
