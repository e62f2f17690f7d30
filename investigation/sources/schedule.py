"""Durations as operators type them (`15m`, `1h`, `90d`) and when a source is due."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from investigation.errors import ValidationFailed

_DURATION = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MIN_EVERY = 60  # seconds: a shorter interval would only spend the helpdesk's rate limit


def parse_duration(text: str, *, field: str) -> int:
    """Seconds in `text` (`30s`, `15m`, `2h`, `90d`); ValidationFailed naming `field` otherwise."""
    match = _DURATION.match(text or "")
    if not match or int(match.group(1)) <= 0:
        raise ValidationFailed(field, f"{text!r} is not a duration such as 15m, 2h or 90d")
    return int(match.group(1)) * _UNIT[match.group(2)]


def parse_every(text: str) -> int:
    seconds = parse_duration(text, field="every")
    if seconds < MIN_EVERY:
        raise ValidationFailed("every", f"at least {MIN_EVERY // 60}m between two syncs of one source")
    return seconds


def is_due(*, every_seconds: int, last_started: datetime | None, now: datetime) -> bool:
    """Whether a source syncing every `every_seconds` should start a sync at `now`."""
    return last_started is None or now - last_started >= timedelta(seconds=every_seconds)
