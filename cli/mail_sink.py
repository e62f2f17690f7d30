"""A local SMTP sink for `sleuth demo`: an aiosmtpd server on 127.0.0.1 that keeps what it receives, so
a newcomer sees the e-mail channel work without configuring a mail server."""

from __future__ import annotations

import socket
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MailSink:
    """Accepts every message; `messages` holds them parsed, in arrival order."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.messages: list[EmailMessage] = []
        sink = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                parsed = message_from_bytes(bytes(envelope.content), policy=policy.default)
                sink.messages.append(parsed)
                return "250 2.0.0 Ok: kept by the demo sink"

        self.port = _free_port()
        self._controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def wait(self, count: int, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return len(self.messages) >= count

    def close(self) -> None:
        self._controller.stop()


def preview(message: EmailMessage, lines: int = 8) -> str:
    """Subject, addresses and the first lines of the plain-text part."""
    body = message.get_body(("plain",))
    text = body.get_content() if body is not None else ""
    first = [line for line in text.splitlines()][:lines]
    head = [f"From: {message['From']}", f"To: {message['To']}", f"Subject: {message['Subject']}",
            f"Message-ID: {message['Message-ID']}", ""]
    return "\n".join(head + first)
