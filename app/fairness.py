"""Tenant fairness (`app.admission`, `app.admission_steps`) as the task shell asks for it
(`tasks.fairness`)."""

from __future__ import annotations

from app import admission, admission_steps
from bootstrap import Services
from tasks.fairness import Launch, Send


class TenantFairness:
    """`tasks.fairness.Fairness`, by the application's admission rules."""

    def priority(self, services: Services, tenant_id: str) -> int:
        return admission.priority(services, tenant_id)

    def finished(self, services: Services, tenant_id: str, inv_id: str, launch: Launch) -> list[str]:
        return admission.finished(services, tenant_id, inv_id, launch)

    def release_held(self, services: Services, launch: Launch) -> list[str]:
        admission.prune(services)
        return [i for t in admission.held_tenants(services) for i in admission.release(services, t, launch)]

    def waiting(self, services: Services, ids: list[str]) -> set[str]:
        held = admission.held_ids(services)
        parked = " ".join(m for t in admission_steps.parked_tenants(services)
                          for m in admission_steps.parked(services, t))
        return {i for i in ids if i in held or i in parked}

    def enter(self, services: Services, tenant_id: str) -> bool:
        return admission_steps.enter(services, tenant_id)

    def park(self, services: Services, tenant_id: str, message: str) -> None:
        admission_steps.park(services, tenant_id, message)

    def leave(self, services: Services) -> bool:
        return bool(admission_steps.leave(services))

    def release_parked(self, services: Services, send: Send, *, prune: bool = False) -> int:
        if prune:
            admission_steps.prune_dead(services)
        return admission_steps.release(services, send)

    def join(self, services: Services) -> None:
        admission_steps.register_process(services)

    def part(self, services: Services) -> None:
        admission_steps.unregister_process(services)
