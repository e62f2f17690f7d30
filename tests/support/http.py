"""Test doubles of the world at the edge: a helpdesk-side webhook receiver on 127.0.0.1, free ports."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """A webhook endpoint on 127.0.0.1: answers from `script` (then `default`), records every request."""

    def __init__(self, default: tuple[int, dict[str, str]] = (204, {}), delay: float = 0.0) -> None:
        self.script: list[tuple[int, dict[str, str]]] = []
        self.default = default
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                receiver.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()},
                                          "body": body, "at": time.time()})
                time.sleep(receiver.delay)
                status, headers = receiver.script.pop(0) if receiver.script else receiver.default
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/sleuth"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    """A port nothing listens on right now (also a closed port for "receiver down" tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
