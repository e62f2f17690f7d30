"""Fairness where a step starts: a tenant with more work than another active tenant runs at most its
share of the worker processes, so the lighter tenant's steps find a free process instead of waiting for
the heavier tenant's steps already running (queue priorities cannot do that: nothing preempts a running
step).

Every worker process registers itself (`procs`, pruned by process liveness on its host) and records the
tenant of the step it runs (`busy`). A step may start unless its tenant is *heavier* (more investigations
admitted or held, `app.admission.load`) than another tenant with work in flight; then at most
`step_cap(slots, active)` of its steps run at once. A step over the cap is *parked*: its whole Celery
message (same task id, chord and error callback, priority) goes to the tail of the tenant's parked list
in Redis and the message is acked without a result (a chord member never counts as done). Parked steps
are sent again, oldest first, as the tenant's running steps finish (`release`, after every step and by
the watchdog); one that loses its slot in a race is parked again. The re-drive counts parked steps as in
flight, so they are neither lost nor started twice by it.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

from app.admission import _held_key, _running_key, _script, _tenants_key, known_tenants, loads
from bootstrap import Services

Send = Callable[[str], None]
HOST = socket.gethostname()

# Atomic count-and-take of a slot, in ONE round trip per step: the tenant's cap (`cap_for`, computed in the
# script from the same keys: every known tenant's load, the registered processes), then its steps running
# now (entries older than a step's hard time limit are from processes that died mid-step and are dropped)
# against that cap. A tenant's running and held keys are ARGV[6] and ARGV[7] followed by its id (the
# names `app.admission` gives them; one Redis: Celery's broker).
_ENTER = """
local me, tenant = ARGV[1], ARGV[2]
local mine, others, lightest = 0, 0, nil
for _, t in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  local load = redis.call('SCARD', ARGV[6] .. t) + redis.call('LLEN', ARGV[7] .. t)
  if t == tenant then
    mine = load
  elseif load > 0 then
    others = others + 1
    if lightest == nil or load < lightest then lightest = load end
  end
end
local limit = tonumber(ARGV[5])
if others > 0 and lightest < mine then
  limit = math.max(1, math.floor((redis.call('HLEN', KEYS[2]) - 1) / (others + 1)))
end
local busy = redis.call('HGETALL', KEYS[1])
local count = 0
for i = 1, #busy, 2 do
  local field, value = busy[i], busy[i + 1]
  local sep = string.find(value, '|', 1, true)
  local owner, started = string.sub(value, 1, sep - 1), tonumber(string.sub(value, sep + 1))
  if started < tonumber(ARGV[4]) then
    redis.call('HDEL', KEYS[1], field)
  elseif field ~= me and owner == tenant then
    count = count + 1
  end
end
redis.call('HSET', KEYS[2], me, ARGV[3])
if count >= limit then return 0 end
redis.call('HSET', KEYS[1], me, tenant .. '|' .. ARGV[3])
return 1
"""

# A step's end, in one round trip: its slot given back, and the tenants that have parked steps (usually
# none: then nothing else is asked of Redis). A tenant's parked list is ARGV[2] followed by its id.
_LEAVE = """
redis.call('HDEL', KEYS[1], ARGV[1])
local waiting = {}
for _, t in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if redis.call('LLEN', ARGV[2] .. t) > 0 then table.insert(waiting, t) end
end
return waiting
"""


def step_cap(slots: int, active: int) -> int:
    """Steps a heavier tenant may run while `active` tenants (itself included) have work: one process is
    kept free for a tenant that is not active yet (its first step never waits for a running one), the
    rest is shared equally; never below 1 (a tenant always makes progress). 4 processes, 2 tenants: 1."""
    return max(1, (slots - 1) // max(1, active))


def _key(services: Services, name: str) -> str:
    return f"{services.settings.redis_prefix}:fair:{name}"


def _parked_key(services: Services, tenant_id: str) -> str:
    return _key(services, f"parked:{tenant_id}")


def me() -> str:
    return f"{HOST}:{os.getpid()}"


def register_process(services: Services) -> None:
    """A worker process joins the pool of slots (called after fork, and again by every step it runs)."""
    services.redis.hset(_key(services, "procs"), me(), str(int(time.time())))


def unregister_process(services: Services) -> None:
    pipe = services.redis.pipeline()
    pipe.hdel(_key(services, "procs"), me())
    pipe.hdel(_key(services, "busy"), me())
    pipe.execute()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prune_dead(services: Services) -> int:
    """Forget this host's processes that died (a SIGKILLed pool child frees its slot at once); the ones
    of other hosts are pruned there. The number forgotten."""
    dead = []
    for raw in services.redis.hkeys(_key(services, "procs")):
        field = raw.decode() if isinstance(raw, bytes) else str(raw)
        host, _, pid = field.rpartition(":")
        if host == HOST and pid.isdigit() and not _alive(int(pid)):
            dead.append(field)
    if dead:
        pipe = services.redis.pipeline()
        pipe.hdel(_key(services, "procs"), *dead)
        pipe.hdel(_key(services, "busy"), *dead)
        pipe.execute()
    return len(dead)


def cap_for(services: Services, tenant_id: str) -> int | None:
    """The tenant's running-step cap now, or None when it is not heavier than any other active tenant."""
    all_loads = loads(services)
    mine = all_loads.get(tenant_id, 0)
    others = [load for t, load in all_loads.items() if t != tenant_id and load > 0]
    if not others or min(others) >= mine:
        return None
    slots = int(services.redis.hlen(_key(services, "procs")))
    return step_cap(slots, len(others) + 1)


def enter(services: Services, tenant_id: str, *, now: float | None = None, proc: str | None = None) -> bool:
    """Take a slot for a step of `tenant_id` in this process (`proc`: another one's name, for tests) (True),
    or refuse (False: park the step). The cap is `cap_for`'s, taken in the same script."""
    now = time.time() if now is None else now
    stale_before = now - services.settings.workers.task_time_limit - 10
    keys = [_key(services, "busy"), _key(services, "procs"), _tenants_key(services)]
    return bool(_script(services, _ENTER)(keys, [
        proc or me(), tenant_id, f"{now:.3f}", f"{stale_before:.3f}", str(1 << 30),
        _running_key(services, ""), _held_key(services, "")]))


def leave(services: Services, *, proc: str | None = None) -> list[str]:
    """Give this process's slot back (`proc`: another one's, for tests); the tenants with parked steps."""
    return _decoded(_script(services, _LEAVE)([_key(services, "busy"), _tenants_key(services)],
                                                [proc or me(), _parked_key(services, "")]))


def park(services: Services, tenant_id: str, message: str) -> None:
    """Keep a refused step (its serialized signature) at the tail of the tenant's parked list."""
    services.redis.rpush(_parked_key(services, tenant_id), message)


def running(services: Services, tenant_id: str) -> int:
    values = services.redis.hvals(_key(services, "busy"))
    return sum(
        1 for v in values if (v.decode() if isinstance(v, bytes) else str(v)).split("|")[0] == tenant_id
    )


def parked_tenants(services: Services) -> list[str]:
    """Tenants with parked steps (every tenant that ever went through admission is looked at)."""
    tenants = known_tenants(services)
    pipe = services.redis.pipeline()
    for tenant_id in tenants:
        pipe.llen(_parked_key(services, tenant_id))
    return [t for t, n in zip(tenants, pipe.execute(), strict=True) if int(n)]


def parked(services: Services, tenant_id: str) -> list[str]:
    return _decoded(services.redis.lrange(_parked_key(services, tenant_id), 0, -1))


def parked_count(services: Services, tenant_id: str) -> int:
    return int(services.redis.llen(_parked_key(services, tenant_id)))


def _decoded(raw: Iterable[Any]) -> list[str]:
    return [r.decode() if isinstance(r, bytes) else str(r) for r in raw]


def release(services: Services, send: Send) -> int:
    """Send parked steps again, oldest first, while their tenant is under its cap; the number sent. A
    step is taken off the list before it is sent: if this process dies in between, the re-drive finds
    its investigation idle with nothing in flight and sends its step again."""
    waiting = parked_tenants(services)
    if not waiting:
        return 0
    prune_dead(services)  # a dead process's step must not hold a slot of its tenant
    sent = 0
    for tenant_id in waiting:
        key = _parked_key(services, tenant_id)
        cap = cap_for(services, tenant_id)
        room = (1 << 30) if cap is None else cap - running(services, tenant_id)
        while room > 0:
            message = services.redis.lpop(key)
            if message is None:
                break
            send(message.decode() if isinstance(message, bytes) else str(message))
            sent += 1
            room -= 1
    return sent


__all__ = ["enter", "leave", "park", "parked", "parked_count", "parked_tenants", "prune_dead",
           "register_process", "release", "running", "step_cap", "unregister_process"]
