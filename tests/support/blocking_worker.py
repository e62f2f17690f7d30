"""A Celery app with one task that holds its prefork child until the test releases it: what stopping a worker
mid-task looks like, with nothing of Sleuth's in the way. Run as `celery -A tests.support.blocking_worker
worker`
with BLOCKING_BROKER_URL / BLOCKING_PREFIX set."""

from __future__ import annotations

import os
import time
from pathlib import Path

from celery import Celery


def make_app(broker_url: str, prefix: str) -> Celery:
    app = Celery("blocking", broker=broker_url, set_as_current=False)
    app.conf.update(broker_transport_options={"global_keyprefix": f"{prefix}:celery:"}, task_acks_late=True,
                    worker_prefetch_multiplier=1, worker_hijack_root_logger=False)
    app.task(name="blocking.hold")(hold)
    return app


def hold(folder: str) -> None:
    """Mark `started`, wait (up to a minute) for `release`, mark `done`."""
    base = Path(folder)
    (base / "started").touch()
    for _ in range(600):
        if (base / "release").exists():
            break
        time.sleep(0.1)
    (base / "done").touch()


app = make_app(os.environ.get("BLOCKING_BROKER_URL", "memory://"), os.environ.get("BLOCKING_PREFIX", "b"))
