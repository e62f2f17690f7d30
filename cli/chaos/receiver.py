"""A webhook receiver for chaos runs (on 127.0.0.1 unless told): can be switched down (503) and counts each
delivery id, and each investigation id the accepted bodies name."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChaosReceiver:
    """Answers 204 (or 503 while `down`); records (webhook-id, status, time) of every POST."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.down = False
        self.log: list[tuple[str, int, float]] = []
        self.investigations: Counter[str] = Counter()  # investigation id → accepted deliveries naming it
        self.distinct: dict[str, set[str]] = {}  # investigation id → the webhook-ids accepted for it
        self.hold_s = 0.0  # seconds an accepted delivery waits for its answer (a slow receiver)
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                status = 503 if owner.down else 204
                with owner._lock:
                    owner.log.append((self.headers.get("webhook-id", ""), status, time.time()))
                    if status < 300:
                        inv = _investigation_id(body)
                        owner.investigations[inv] += 1
                        owner.distinct.setdefault(inv, set()).add(self.headers.get("webhook-id", ""))
                if owner.hold_s:
                    time.sleep(owner.hold_s)
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_port}/hooks/chaos"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def accepted(self) -> Counter[str]:
        """Delivery id → number of times it was accepted (2xx)."""
        with self._lock:
            return Counter(i for i, status, _ in self.log if status < 300)

    def attempts(self) -> int:
        with self._lock:
            return len(self.log)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _investigation_id(body: bytes) -> str:
    try:
        payload = json.loads(body)
    except ValueError:
        return ""
    return (
        str(payload.get("id") or payload.get("investigation_id") or "") if isinstance(payload, dict) else ""
    )
