"""A RabbitMQ virtual host of the test run's own on the machine's server (127.0.0.1:5672, guest/guest, or
SLEUTH_TEST_RABBITMQ_URL): created with `rabbitmqctl add_vhost`, emptied between tests, deleted at the end, so
that test runs sharing the server neither collide nor leave anything behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from urllib.parse import quote, urlsplit, urlunsplit

from amqp.exceptions import AMQPError, NotFound
from kombu.connection import Connection
from kombu.exceptions import OperationalError

from workers.broker import DELAYED_QUEUES
from workers.names import ALL_QUEUES

DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/"


def server_url() -> str:
    return os.environ.get("SLEUTH_TEST_RABBITMQ_URL", DEFAULT_URL)


def answers(url: str) -> bool:
    try:
        with Connection(url, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=0, timeout=2)
        return True
    except (OperationalError, AMQPError, OSError):
        return False


def _ctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", "--quiet", *args], check=True, capture_output=True, timeout=60)


class Vhost:
    """One virtual host on the server, for the user of the server URL."""

    def __init__(self, base_url: str) -> None:
        self.name = f"sleuth-test-{uuid.uuid4().hex[:10]}"
        parts = urlsplit(base_url)
        self.user = parts.username or "guest"
        self.url = urlunsplit((parts.scheme, parts.netloc, "/" + quote(self.name, safe=""), "", ""))

    @staticmethod
    def usable() -> bool:
        return shutil.which("rabbitmqctl") is not None

    def create(self) -> None:
        _ctl("add_vhost", self.name)
        _ctl("set_permissions", "-p", self.name, self.user, ".*", ".*", ".*")

    def delete(self) -> None:
        _ctl("delete_vhost", self.name)

    def drop_connections(self) -> None:
        """Close every client connection to this vhost, as a broker restart does to its clients."""
        _ctl("close_all_connections", "-p", self.name, "sleuth test: broker restart")

    def purge(self) -> None:
        """Empty Sleuth's queues and the delayed-delivery ones (what a test's workers left behind)."""
        with Connection(self.url, connect_timeout=5) as conn:
            channel = conn.channel()
            for queue in (*ALL_QUEUES, *DELAYED_QUEUES):
                try:
                    channel.queue_purge(queue)
                except NotFound:  # not declared in this vhost (yet): the broker closed the channel
                    channel = conn.channel()
            channel.close()
