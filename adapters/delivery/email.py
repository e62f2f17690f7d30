"""The ``email`` channel: the answer as a multipart (text + HTML) mail through the channel's SMTP relay.

``Message-ID`` is derived from the delivery id, so a retry never shows a second mail in a thread;
``In-Reply-To``/``References`` thread it under ``reply_to_message_id``. SMTP 4xx replies and connection
failures are transient (retried with the delivery backoff); 5xx is permanent, with the server's reply.
The connection goes to the address the outbound guard checked (no re-resolution, no rebinding).
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any

from adapters.delivery.channels import check_address
from adapters.delivery.outbound import OutboundGuard
from adapters.delivery.render import render
from investigation.errors import ReceiverRejected, ReceiverUnavailable
from investigation.ports import Delivered


class _Pinned:
    """Mixin: connect to the checked address while TLS and EHLO keep using the configured host name."""

    pinned: str
    _host: str  # smtplib's name for the server host (TLS server_hostname)
    last_reply: tuple[int, bytes] | None = None

    def data(self, msg: Any) -> tuple[int, bytes]:  # remember the server's final answer to DATA
        reply: tuple[int, bytes] = super().data(msg)  # type: ignore[misc]  # mixin over smtplib.SMTP: mypy cannot resolve super().data
        self.last_reply = reply
        return reply


class PinnedSMTP(_Pinned, smtplib.SMTP):
    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        return socket.create_connection((self.pinned, port), timeout, self.source_address)


class PinnedSMTPSSL(_Pinned, smtplib.SMTP_SSL):
    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        raw = socket.create_connection((self.pinned, port), timeout, self.source_address)
        return self.context.wrap_socket(raw, server_hostname=self._host)


def message_id(delivery_id: str, from_address: str) -> str:
    return f"<{delivery_id}@{from_address.rsplit('@', 1)[-1]}>"


def _bracketed(value: str) -> str:
    value = value.strip()
    return value if value.startswith("<") else f"<{value}>"


def _reply(code: int, text: bytes | str) -> str:
    body = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return f"{code} {' '.join(body.split())}"[:300]


class EmailDeliverer:
    """One SMTP channel (its config and decrypted secrets), the `Deliverer` port."""

    channel = "email"

    def __init__(self, config: dict[str, Any], secrets: dict[str, str], guard: OutboundGuard, *,
                 timeout: float, ca_file: Path | None = None) -> None:
        self.timeout = timeout
        self._config = config
        self._password = secrets.get("password")
        self._guard = guard
        self._context = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)

    def close(self) -> None:
        return

    def build(
        self, *, delivery_id: str, target: dict[str, object], payload: dict[str, object]
    ) -> EmailMessage:
        to = target.get("to")
        recipients = [to] if isinstance(to, str) else list(to) if isinstance(to, list) else []
        try:
            recipients = [check_address(str(r)) for r in recipients]
        except ValueError as exc:
            raise ReceiverRejected(str(exc)) from exc
        if not recipients:
            raise ReceiverRejected("the e-mail callback has no recipient")
        trace_url = payload.get("trace_url")
        rendered = render(
            payload, delivery_id=delivery_id, trace_url=trace_url if isinstance(trace_url, str) else None
        )
        sender = str(self._config["from"])
        msg = EmailMessage()
        msg["From"] = sender
        msg["To"] = ", ".join(recipients)
        msg["Subject"] = rendered.subject
        msg["Date"] = formatdate(localtime=False)
        msg["Message-ID"] = message_id(delivery_id, sender)
        msg["X-Sleuth-Delivery"] = delivery_id
        parent = target.get("reply_to_message_id")
        if isinstance(parent, str) and parent.strip():
            msg["In-Reply-To"] = _bracketed(parent)
            msg["References"] = _bracketed(parent)
            msg.replace_header("Subject", "Re: " + rendered.subject)
        msg.set_content(rendered.text)
        msg.add_alternative(f"<!doctype html><html><body>{rendered.html}</body></html>", subtype="html")
        return msg

    def deliver(self, *, delivery_id: str, target: dict[str, object], payload: dict[str, object],
                secret: str, resume: bool = False) -> Delivered:
        """Send the mail once. `resume` changes nothing: the Message-ID is the same on every attempt."""
        msg = self.build(delivery_id=delivery_id, target=target, payload=payload)
        host, port = str(self._config["host"]), int(self._config["port"])
        address = self._guard.pin(host, port)
        cls = PinnedSMTPSSL if self._config.get("ssl") else PinnedSMTP
        # EHLO names the sender's domain: no getfqdn() lookup, and a name relays accept.
        kwargs: dict[str, Any] = {
            "timeout": self.timeout,
            "local_hostname": str(self._config["from"]).rsplit("@", 1)[-1],
        }
        if cls is PinnedSMTPSSL:
            kwargs["context"] = self._context
        client = cls(**kwargs)
        client.pinned = address
        client._host = host  # TLS verifies the configured name, not the address
        try:
            client.connect(host, port)
            client.ehlo()
            if self._config.get("starttls"):
                client.starttls(context=self._context)
                client.ehlo()
            if self._config.get("username"):
                client.login(str(self._config["username"]), self._password or "")
            refused = client.send_message(msg)
            code, reply = client.last_reply or (250, b"OK")
            detail = _reply(code, reply)
            if refused:
                detail += f"; refused: {', '.join(sorted(refused))}"
            return Delivered(code, detail)
        except smtplib.SMTPAuthenticationError as exc:
            raise ReceiverRejected(
                f"the SMTP server rejected the username/password: {_reply(exc.smtp_code, exc.smtp_error)}",
                status_code=exc.smtp_code,
            ) from exc
        except smtplib.SMTPRecipientsRefused as exc:
            replies = list(exc.recipients.values())
            who_said = "; ".join(f"{who}: {_reply(c, m)}" for who, (c, m) in exc.recipients.items())
            if all(400 <= c < 500 for c, _ in replies):
                raise ReceiverUnavailable(
                    f"recipients deferred: {who_said}", status_code=replies[0][0]
                ) from exc
            raise ReceiverRejected(f"recipients refused: {who_said}", status_code=replies[0][0]) from exc
        except smtplib.SMTPResponseException as exc:
            said = _reply(exc.smtp_code, exc.smtp_error)
            if 400 <= exc.smtp_code < 500:
                raise ReceiverUnavailable(f"SMTP server deferred: {said}", status_code=exc.smtp_code) from exc
            raise ReceiverRejected(f"SMTP server refused: {said}", status_code=exc.smtp_code) from exc
        except smtplib.SMTPNotSupportedError as exc:
            raise ReceiverRejected(f"the SMTP server does not support this: {exc}") from exc
        except ssl.SSLError as exc:
            raise ReceiverRejected(f"TLS with the SMTP server failed: {exc}") from exc
        except (smtplib.SMTPException, OSError) as exc:
            raise ReceiverUnavailable(
                f"could not reach the SMTP server: {type(exc).__name__}: {exc}"
            ) from exc
        finally:
            try:
                client.quit()
            except (smtplib.SMTPException, OSError):
                client.close()


__all__ = ["EmailDeliverer", "PinnedSMTP", "PinnedSMTPSSL", "message_id"]
