"""`sleuth tenants rotate-key`: a new API key for a tenant; the old key, its console sessions and its
sign-in links stop working at once."""

from __future__ import annotations

import json
import logging

import redis
from rich.console import Console

from config.settings import Settings
from investigation.errors import SleuthError

log = logging.getLogger(__name__)


def rotate_key(settings: Settings, *, tenant: str, as_json: bool, console: Console) -> None:
    """Rotate the key of `tenant` and print the new one (shown once). Sessions are refused afterwards
    whatever happens here (each carries a tag of the key it was made with); they are also deleted from
    Redis when a Redis is configured or a `sleuth up` is running, so nothing stale is kept."""
    from bootstrap import Services
    from cli.processes import running_stack
    from storage import repositories as repo
    from storage.console_sessions import ConsoleSessions
    from storage.redis_state import client_from_url

    with Services(settings).session() as db:
        found = repo.get_tenant_by_name(db, name=tenant)
        rotated, key = repo.rotate_api_key(db, tenant_id=found.id)
        tenant_id, prefix = rotated.id, rotated.api_key_prefix
    redis_url = settings.redis_url or str((running_stack(settings) or {}).get("redis_url") or "")
    ended: int | None = None
    if redis_url:
        try:
            ended = ConsoleSessions(client_from_url(redis_url), settings.redis_prefix).end_tenant(tenant_id)
        except (redis.RedisError, SleuthError) as exc:
            log.warning("console sessions not deleted (they are refused anyway): %s", exc)
    if as_json:
        print(json.dumps({"id": tenant_id, "name": tenant, "api_key": key, "sessions_ended": ended}))
        return
    print(f"api key:         {key}   (shown once; stored hashed)")
    console.print(
        f"the old key ({prefix[:3]}… before) no longer works; its console sessions and sign-in links "
        f"are refused{f' ({ended} session(s) deleted)' if ended else ''}"
    )
