"""What one Celery send costs on each broker, measured in the same minutes: rounds of N sends of a small task
message to the `deliver` queue (no worker consumes), alternating between the Redis broker and RabbitMQ
(quorum queue, publisher confirms); prints each round's milliseconds per send and the medians, then removes
what it sent.

    .venv/bin/python scripts/broker_send_bench.py --amqp amqp://guest:guest@127.0.0.1:5672/VHOST \\
        --redis redis://127.0.0.1:6379/12 [--sends 500] [--rounds 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from config.settings import Settings
from storage.redis_urls import client_from_url
from workers import names
from workers.app import create_celery
from workers.broker import queue_depths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--amqp", required=True, help="a RabbitMQ vhost of the run's own (its deliver queue is purged)"
    )
    parser.add_argument("--redis", required=True)
    parser.add_argument("--sends", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    prefix = f"sendbench{uuid.uuid4().hex[:8]}"
    home = Path(tempfile.mkdtemp(prefix="sendbench-"))
    settings = {
        "redis": Settings(home=home, redis_url=args.redis, redis_prefix=prefix),
        "rabbitmq": Settings(home=home, redis_url=args.redis, redis_prefix=prefix, broker_url=args.amqp),
    }
    apps = {broker: create_celery(s) for broker, s in settings.items()}
    per_send: dict[str, list[float]] = {broker: [] for broker in apps}
    for round_ in range(args.rounds):
        for broker, app in apps.items():
            started = time.perf_counter()
            for i in range(args.sends):
                app.send_task(names.T_DELIVER, args=(f"bench-{round_}-{i}",))
            per_send[broker].append(1000 * (time.perf_counter() - started) / args.sends)
    redis = client_from_url(args.redis)
    for broker, values in per_send.items():
        waiting = queue_depths(settings[broker], redis)[names.Q_DELIVER]
        print(f"{broker}: ms per send by round {[round(v, 3) for v in values]}, median "
              f"{statistics.median(values):.3f} ({waiting} messages waiting in deliver)")
    for key in redis.scan_iter(f"{prefix}:*"):
        redis.delete(key)
    with apps["rabbitmq"].connection_for_write() as conn:
        conn.default_channel.queue_purge(names.Q_DELIVER)


if __name__ == "__main__":
    main()
