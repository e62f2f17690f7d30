"""The running-step cap against a real Redis, with process names and the clock injected: who may start a
step, what is parked, what is sent again and in which order."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import admission_steps as gate
from bootstrap import Services
from config.settings import Settings

NOW = 1_000_000.0


@pytest.fixture()
def services(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[Services]:
    svc = Services(Settings(home=tmp_path / "home", redis_url=redis_url, redis_prefix=redis_prefix,
                            task_time_limit=120))
    yield svc
    svc.engine.dispose()


def _loads(services: Services, **load: int) -> None:
    """Tenants with `load` investigations admitted (what `app.admission.admit` records)."""
    prefix = services.settings.redis_prefix
    for tenant, n in load.items():
        services.redis.sadd(f"{prefix}:fair:tenants", tenant)
        services.redis.delete(f"{prefix}:fair:running:{tenant}")
        if n:
            services.redis.sadd(f"{prefix}:fair:running:{tenant}", *[f"{tenant}-{i}" for i in range(n)])


def _procs(services: Services, *names: str) -> None:
    services.redis.hset(f"{services.settings.redis_prefix}:fair:procs",
                        mapping={name: str(NOW) for name in names})


def test_a_heavier_tenant_gets_its_share_and_a_lighter_one_is_never_refused(services: Services) -> None:
    _procs(services, "h:1", "h:2", "h:3", "h:4")
    _loads(services, big=40, small=1)
    assert gate.enter(services, "big", now=NOW, proc="h:1")
    assert not gate.enter(services, "big", now=NOW, proc="h:2")  # (4 - 1) // 2 = 1 step
    assert gate.enter(services, "small", now=NOW, proc="h:2")
    assert gate.enter(services, "small", now=NOW, proc="h:3")  # the lighter tenant is not capped
    assert gate.running(services, "big") == 1 and gate.running(services, "small") == 2
    gate.leave(services, proc="h:1")
    assert gate.enter(services, "big", now=NOW, proc="h:4")


def test_a_tenant_alone_or_no_heavier_is_not_capped(services: Services) -> None:
    _procs(services, "h:1", "h:2", "h:3", "h:4")
    _loads(services, big=40, small=0)
    assert all(gate.enter(services, "big", now=NOW, proc=f"h:{i}") for i in range(1, 5))
    _loads(services, big=3, small=3)  # equal loads: the queues' FIFO decides, no cap
    assert gate.enter(services, "small", now=NOW, proc="h:5")


def test_a_step_of_a_process_that_died_long_ago_does_not_count(services: Services) -> None:
    _procs(services, "h:1", "h:2", "h:3", "h:4")
    _loads(services, big=40, small=1)
    assert gate.enter(services, "big", now=NOW - 200, proc="h:1")  # older than the time limit + 10 s
    assert gate.enter(services, "big", now=NOW, proc="h:2")
    assert not gate.enter(services, "big", now=NOW, proc="h:3")


def test_this_hosts_dead_processes_are_forgotten(services: Services) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    name = f"{gate.HOST}:{dead}"
    _procs(services, name, "elsewhere:1")
    services.redis.hset(f"{services.settings.redis_prefix}:fair:busy", name, f"big|{NOW}")
    assert gate.prune_dead(services) == 1
    assert gate.running(services, "big") == 0
    assert services.redis.hkeys(f"{services.settings.redis_prefix}:fair:procs") == [b"elsewhere:1"]


def test_parked_steps_are_sent_again_oldest_first_up_to_the_cap(services: Services) -> None:
    _procs(services, "h:1", "h:2", "h:3", "h:4")
    _loads(services, big=40, small=1)
    for i in range(4):
        gate.park(services, "big", f"step-{i}")
    assert gate.enter(services, "big", now=NOW, proc="h:1")
    sent: list[str] = []
    assert gate.release(services, sent.append) == 0  # big runs its one step
    gate.leave(services, proc="h:1")
    assert gate.release(services, sent.append) == 1 and sent == ["step-0"]
    _loads(services, big=40, small=0)  # small's question is done: big has every process again
    assert gate.release(services, sent.append) == 3
    assert sent == ["step-0", "step-1", "step-2", "step-3"] and gate.parked_count(services, "big") == 0


@pytest.mark.parametrize("slots", [1, 2, 3, 4, 7])
@pytest.mark.parametrize(
    "loads",
    [
        {"big": 40, "small": 1},
        {"big": 9, "mid": 4, "small": 2},
        {"big": 5, "small": 5},
        {"big": 3},
        {"big": 6, "small": 0, "held": 0},
    ],
)
def test_enter_admits_exactly_the_cap_of_cap_for(
    services: Services, slots: int, loads: dict[str, int]
) -> None:
    """`enter` takes the cap inside its script (one round trip); it is `cap_for`'s, for every shape of
    load: the heaviest tenant gets exactly `cap_for` steps (or every process when uncapped)."""
    _procs(services, *[f"h:{i}" for i in range(1, slots + 1)])
    _loads(services, **loads)
    services.redis.rpush(f"{services.settings.redis_prefix}:fair:held:big", "held-1")  # held ones count too
    cap = gate.cap_for(services, "big")
    admitted = 0
    for i in range(1, slots + 1):
        if gate.enter(services, "big", now=NOW, proc=f"h:{i}"):
            admitted += 1
    assert admitted == (slots if cap is None else min(cap, slots))


def test_leave_names_the_tenants_with_parked_steps(services: Services) -> None:
    _procs(services, "h:1", "h:2")
    _loads(services, big=3, small=1)
    assert gate.enter(services, "big", now=NOW, proc="h:1")
    assert gate.leave(services, proc="h:1") == [] and gate.running(services, "big") == 0
    gate.park(services, "small", "step-0")
    assert gate.enter(services, "big", now=NOW, proc="h:1")
    assert gate.leave(services, proc="h:1") == ["small"] and gate.running(services, "big") == 0
