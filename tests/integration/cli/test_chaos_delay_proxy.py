"""`cli.chaos.delay_proxy.DelayProxy` in front of a loopback echo server: bytes pass unchanged and in order;
with a delay set, what a client sends is held at least the delay's lower bound (never less), then passed
on."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from cli.chaos.delay_proxy import DelayProxy


@pytest.fixture()
def echo() -> Iterator[tuple[str, int]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=lambda c=conn: [c.sendall(d) for d in iter(lambda: c.recv(4096), b"")],
                             daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()
    server.close()


def _exchange(conn: socket.socket, data: bytes) -> bytes:
    conn.sendall(data)
    got = b""
    while len(got) < len(data):
        got += conn.recv(4096)
    return got


def test_bytes_pass_in_order_and_the_delay_holds_each_send(echo: tuple[str, int]) -> None:
    proxy = DelayProxy("127.0.0.1", echo)
    try:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as conn:
            assert _exchange(conn, b"plain") == b"plain"
            proxy.delay_ms = (50.0, 20.0)
            payload = bytes(range(256)) * 64
            assert _exchange(conn, payload) == payload  # many chunks, held and never reordered
            held = []
            for _ in range(5):
                began = time.monotonic()
                assert _exchange(conn, b"x") == b"x"
                held.append(time.monotonic() - began)
            assert min(held) >= 0.030  # the lower bound of 50 ± 20 ms; no upper bound asserted (load)
            proxy.delay_ms = None
            assert _exchange(conn, b"again") == b"again"
        assert proxy.connections == 1
    finally:
        proxy.close()
