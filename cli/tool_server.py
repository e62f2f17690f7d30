"""What the sample tool APIs (`cli.tool_services`, `cli.tool_shop`, `cli.tool_travel`) share: a JSON server
on a free port of 127.0.0.1, serving GET in a daemon thread, and their tool declarations read from
examples/tools/ and pointed at it."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class LocalServer:
    """A sample API on one local port: `start()` (from the subclass's `__post_init__`) serves it, each GET
    goes to the subclass's `_handle`; `base` is its URL, `close()` stops it."""

    server: ThreadingHTTPServer
    base: str
    thread: threading.Thread

    def start(self) -> None:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                api._handle(self)

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    """A JSON reply of `body` as it is (a test may want it malformed); a client gone meanwhile is fine."""
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    try:
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        pass


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    send(handler, status, json.dumps(body).encode())


def example_declarations(
    folder: Path, names: Sequence[str], example_base: str, base: str
) -> list[dict[str, Any]]:
    """The tools `names` (folder/NAME.yaml) with their example address replaced by `base`."""
    import yaml

    found = []
    for name in names:
        raw = yaml.safe_load((folder / f"{name}.yaml").read_text(encoding="utf-8"))
        raw["url"] = str(raw["url"]).replace(example_base, base)
        found.append(raw)
    return found
