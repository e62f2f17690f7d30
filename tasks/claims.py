"""One reducer per hop: a lease in Redis that a reducer holds while it reduces, renewed while it runs.

A hop's reducer can run twice at once: a chord that closes twice (a retrieval redelivered after its worker
died), the watchdog re-driving a hop whose reducer is alive but slow, a message coming back from the
unacked set. Only the holder of `(investigation, hop)`'s lease reduces and advances the loop; when it is
done the key says `done:<holder>` for a day. A reducer that finds

- no key, or its own live lease (the same Celery message redelivered after its worker died): reduces;
- its own `done:` mark: is the same message redelivered after it finished: it follows the recorded
  decision again (the step's usual idempotent path);
- another live holder or another holder's `done:` mark: returns without advancing anything.

A holder that dies stops renewing: its lease expires after `LEASE_SECONDS` and the watchdog's re-drive
(or the redelivered message) takes over. The lease lives in Redis because the loop's other coordination
state does (budgets, dedup); the hop row's conditional `mark_hop_reduced` stays as the durable backstop.
"""

from __future__ import annotations

import logging
import threading
from enum import StrEnum
from types import TracebackType
from typing import Any, Self

log = logging.getLogger(__name__)

LEASE_SECONDS = 15.0  # > a renewal period (LEASE_SECONDS / 3) with margin for a loaded host
DONE_SECONDS = 86_400

# KEYS[1] lease key; ARGV[1] owner, ARGV[2] lease ms
_ACQUIRE = """
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'live:' .. ARGV[1], 'PX', ARGV[2])
  return 'acquired'
end
if v == 'live:' .. ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'acquired'
end
if v == 'done:' .. ARGV[1] then return 'mine_done' end
if string.sub(v, 1, 5) == 'done:' then return 'other_done' end
return 'busy'
"""
# KEYS[1]; ARGV[1] owner, ARGV[2] ms; renews only the owner's live lease
_RENEW = """
if redis.call('GET', KEYS[1]) == 'live:' .. ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
# KEYS[1]; ARGV[1] owner, ARGV[2] 'done' or 'release', ARGV[3] done seconds
_FINISH = """
if redis.call('GET', KEYS[1]) ~= 'live:' .. ARGV[1] then return 0 end
if ARGV[2] == 'done' then
  redis.call('SET', KEYS[1], 'done:' .. ARGV[1], 'EX', ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
"""


class Claim(StrEnum):
    """What a reducer found when it asked for the hop."""

    ACQUIRED = "acquired"  # reduce (it holds the lease now)
    MINE_DONE = "mine_done"  # this very message reduced it before: follow the recorded decision
    OTHER_DONE = "other_done"  # another reducer did it: advance nothing
    BUSY = "busy"  # another reducer is at it: advance nothing


class HopLease:
    """`with HopLease(redis, key, owner) as lease:` — `lease.claim` says what to do; while ACQUIRED, a
    thread renews the lease. Leaving the block normally marks it done; by an exception, releases it."""

    def __init__(self, redis: Any, key: str, owner: str, *, seconds: float = LEASE_SECONDS) -> None:
        self.redis, self.key, self.owner = redis, key, owner
        self.ms = int(seconds * 1000)
        self.claim: Claim | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def __enter__(self) -> Self:
        self.claim = Claim(_text(self.redis.eval(_ACQUIRE, 1, self.key, self.owner, self.ms)))
        if self.claim is Claim.ACQUIRED:
            self._renewer = threading.Thread(target=self._renew, name=f"lease:{self.key}", daemon=True)
            self._renewer.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self.ms / 3000):
            try:
                if not self.redis.eval(_RENEW, 1, self.key, self.owner, self.ms):
                    return  # lost (expired and taken): the conditional hop update is the backstop
            except Exception as exc:  # noqa: BLE001 - Redis blip: try again at the next period
                log.warning("renewing %s failed: %r", self.key, exc)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        if self.claim is Claim.ACQUIRED:
            self.redis.eval(_FINISH, 1, self.key, self.owner, "release" if exc_type else "done", DONE_SECONDS)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


__all__ = ["LEASE_SECONDS", "Claim", "HopLease"]
