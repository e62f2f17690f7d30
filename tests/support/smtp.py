"""Real SMTP servers for tests (aiosmtpd on 127.0.0.1): plain, STARTTLS or implicit TLS with a
throwaway certificate, AUTH, and scripted replies to DATA (e.g. 451 once, then 250)."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import ssl
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.support.http import free_port


def make_certificate(directory: Path, names: tuple[str, ...] = ("localhost",),
                     with_loopback_ip: bool = True) -> tuple[Path, Path]:
    """A self-signed certificate for `names` (and 127.0.0.1) as (cert.pem, key.pem), valid for one day."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    alt: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
    if with_loopback_ip:
        alt.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{names[0]}-cert.pem", directory / f"{names[0]}-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    data: bytes

    @property
    def message(self) -> EmailMessage:
        return message_from_bytes(self.data, policy=policy.default)


@dataclass
class _Handler:
    replies: list[str] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    attempts: int = 0
    hold_after_data: float = 0.0  # keep the message, answer DATA this much later (worker-death tests)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.attempts += 1
        if self.replies:
            reply = self.replies.pop(0)
            if not reply.startswith("250"):
                return reply
        self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), bytes(envelope.content)))
        if self.hold_after_data:
            await asyncio.sleep(self.hold_after_data)
        return "250 2.0.0 Ok: queued as SLEUTHTEST"


class SmtpServer:
    """One aiosmtpd server. `replies`: answers to the first DATA commands (then 250)."""

    def __init__(self, *, replies: list[str] | None = None, starttls: ssl.SSLContext | None = None,
                 implicit_tls: ssl.SSLContext | None = None, login: tuple[str, str] | None = None) -> None:
        self.handler = _Handler(replies=list(replies or []))
        self.port = free_port()
        kwargs: dict[str, Any] = {}
        if starttls is not None:
            kwargs.update(tls_context=starttls, require_starttls=True)
        if implicit_tls is not None:
            kwargs["ssl_context"] = implicit_tls
        if login is not None:
            expected = (login[0].encode(), login[1].encode())

            def authenticate(
                server: Any, session: Any, envelope: Any, mechanism: str, data: Any
            ) -> AuthResult:
                ok = isinstance(data, LoginPassword) and (data.login, data.password) == expected
                return AuthResult(success=ok, handled=False)

            kwargs.update(authenticator=authenticate, auth_required=True,
                          auth_require_tls=starttls is not None or implicit_tls is not None)
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port,
                                     server_hostname="localhost", **kwargs)
        self.controller.start()

    @property
    def received(self) -> list[Received]:
        return self.handler.received

    def close(self) -> None:
        self.controller.stop()


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context
