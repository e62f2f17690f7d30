"""What a channel is made of: the validated fields of each channel type (API body, CLI flags), split
into the stored configuration and the secrets that are encrypted apart from it."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from investigation.errors import ValidationFailed

SECRET_FIELDS: dict[str, tuple[str, ...]] = {
    "smtp": ("password",),
    "zendesk": ("token", "signing_secret"),
    "freshdesk": ("api_key", "inbound_secret"),
}
_ADDRESS = re.compile(r"[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def check_address(value: str) -> str:
    """A bare e-mail address (no display name), or ValueError."""
    value = value.strip()
    if not _ADDRESS.fullmatch(value) or len(value) > 254:
        raise ValueError(f"{value!r} is not an e-mail address")
    return value


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")


def _base_url(value: str | None) -> str | None:
    if value is not None and not re.match(r"^https?://[^/\s]+", value):
        raise ValueError("must be an http(s) URL")
    return value.rstrip("/") if value else value


class SmtpSpec(_Spec):
    """An SMTP relay: plain, STARTTLS (``starttls``) or implicit TLS (``ssl``), optional AUTH."""

    type: Literal["smtp"]
    host: str = Field(min_length=1, max_length=253)
    port: int = Field(default=587, ge=1, le=65535)
    username: str | None = Field(default=None, max_length=200)
    password: str | None = Field(default=None, max_length=500)
    starttls: bool = False
    ssl: bool = False
    from_address: Annotated[str, Field(alias="from", max_length=254)]

    _from = field_validator("from_address")(classmethod(lambda cls, v: check_address(v)))

    @model_validator(mode="after")
    def _one_tls_mode(self) -> SmtpSpec:
        if self.starttls and self.ssl:
            raise ValueError("starttls and ssl exclude each other")
        if self.password and not self.username:
            raise ValueError("a password needs a username")
        return self


class ZendeskSpec(_Spec):
    """Zendesk Support: internal notes with an API token; inbound hooks signed with `signing_secret`."""

    type: Literal["zendesk"]
    subdomain: str = Field(min_length=1, max_length=63)
    email: str = Field(max_length=254)
    token: str = Field(min_length=1, max_length=500)
    signing_secret: str | None = Field(default=None, max_length=500)
    base_url: str | None = Field(default=None, max_length=500)

    _email = field_validator("email")(classmethod(lambda cls, v: check_address(v)))
    _url = field_validator("base_url")(classmethod(lambda cls, v: _base_url(v)))

    @field_validator("subdomain")
    @classmethod
    def _subdomain(cls, value: str) -> str:
        if not _LABEL.fullmatch(value):
            raise ValueError("a Zendesk subdomain is one DNS label (the part before .zendesk.com)")
        return value.lower()


class FreshdeskSpec(_Spec):
    """Freshdesk: private notes with an API key; inbound hooks carry `inbound_secret` in a header."""

    type: Literal["freshdesk"]
    domain: str = Field(min_length=1, max_length=253)
    api_key: str = Field(min_length=1, max_length=500)
    inbound_secret: str | None = Field(default=None, max_length=500)
    base_url: str | None = Field(default=None, max_length=500)

    _url = field_validator("base_url")(classmethod(lambda cls, v: _base_url(v)))

    @field_validator("domain")
    @classmethod
    def _domain(cls, value: str) -> str:
        value = value.lower().removeprefix("https://").rstrip("/")
        if not all(_LABEL.fullmatch(label) for label in value.split(".")):
            raise ValueError("a Freshdesk domain such as acme.freshdesk.com (or just acme)")
        return value if "." in value else f"{value}.freshdesk.com"


ChannelSpec = Annotated[SmtpSpec | ZendeskSpec | FreshdeskSpec, Field(discriminator="type")]
_ADAPTER: TypeAdapter[SmtpSpec | ZendeskSpec | FreshdeskSpec] = TypeAdapter(ChannelSpec)


def parse_channel(data: dict[str, Any]) -> SmtpSpec | ZendeskSpec | FreshdeskSpec:
    """Validate a channel definition; ValidationFailed names the first bad field."""
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = [str(p) for p in first["loc"] if str(p) not in ("smtp", "zendesk", "freshdesk")]
        raise ValidationFailed(".".join(loc) or "channel", first["msg"]) from None


def split(spec: SmtpSpec | ZendeskSpec | FreshdeskSpec) -> tuple[dict[str, Any], dict[str, str]]:
    """(stored configuration, secrets) of a validated channel; the base URL is filled in for helpdesks."""
    secret_names = SECRET_FIELDS[spec.type]
    data = spec.model_dump(by_alias=True, exclude={"name", "type"})
    secrets = {k: str(data.pop(k)) for k in secret_names if data.get(k)}
    for k in secret_names:
        data.pop(k, None)
    if isinstance(spec, ZendeskSpec) and not spec.base_url:
        data["base_url"] = f"https://{spec.subdomain}.zendesk.com"
    if isinstance(spec, FreshdeskSpec) and not spec.base_url:
        data["base_url"] = f"https://{spec.domain}"
    return data, secrets


def target_endpoint(channel_type: str, config: dict[str, Any]) -> tuple[str, int] | str:
    """What a channel connects to: (host, port) for SMTP, the base URL for helpdesks (SSRF checks)."""
    if channel_type == "smtp":
        return str(config["host"]), int(config["port"])
    return str(config["base_url"])


__all__ = ["SECRET_FIELDS", "ChannelSpec", "FreshdeskSpec", "SmtpSpec", "ZendeskSpec", "check_address",
           "parse_channel", "split", "target_endpoint"]
