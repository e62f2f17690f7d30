"""What a caller may ask for: the validated request of an investigation, whatever the entry point.

The API publishes these models in OpenAPI; the CLI, the bench and the helpdesk hooks build them in code,
so every way in is validated by the same rules.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Discriminator,
    EmailStr,
    Field,
    StrictInt,
    Tag,
    field_validator,
)

from investigation.state import Mode

Audience = Literal["agent", "customer"]


def _has_nul(value: Any) -> bool:
    if isinstance(value, BaseModel):
        return False  # its own fields were checked by its own validator
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_nul(v) for v in value)
    return False


def is_blank(text: str) -> bool:
    """Nothing a person could read: only whitespace, control, format (zero-width, bidi) or unassigned
    characters."""
    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Zl", "Zp")
               for ch in text)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # PostgreSQL cannot store U+0000 in text; every database refuses it here, naming the field.
        if _has_nul(value):
            raise ValueError("must not contain NUL (U+0000) characters")
        return value


class WebhookCallback(_Strict):
    """Deliver the finished investigation by a signed POST to `url`."""

    type: Literal["webhook"]
    url: AnyHttpUrl


class EmailCallback(_Strict):
    """Mail the answer (text + HTML, cited) through the tenant's SMTP channel `channel`."""

    type: Literal["email"]
    channel: str = Field(min_length=1, max_length=100)
    to: list[EmailStr] = Field(min_length=1, max_length=20)
    reply_to_message_id: str | None = Field(default=None, max_length=500,
                                            description="Thread the mail under this Message-ID.")


class ZendeskCallback(_Strict):
    """Post the answer as an internal note (or, with `public`, a public reply) on a Zendesk ticket."""

    type: Literal["zendesk"]
    channel: str = Field(min_length=1, max_length=100)
    ticket_id: int = Field(ge=1)
    public: bool = False


class FreshdeskCallback(_Strict):
    """Post the answer as a private note on a Freshdesk ticket."""

    type: Literal["freshdesk"]
    channel: str = Field(min_length=1, max_length=100)
    ticket_id: int = Field(ge=1)


Callback = Annotated[WebhookCallback | EmailCallback | ZendeskCallback | FreshdeskCallback,
                     Field(discriminator="type")]
MAX_CALLBACKS = 10


def _one_or_many(value: Any) -> str:
    return "list" if isinstance(value, list) else "object"


# Errors name the branch taken: ("callback", "object", "webhook", "url") or ("callback", "list", 0, ...).
Callbacks = Annotated[
    Annotated[Callback, Tag("object")]
    | Annotated[Annotated[list[Callback], Field(min_length=1, max_length=MAX_CALLBACKS)], Tag("list")],
    Discriminator(_one_or_many),
]


class BudgetOverride(_Strict):
    """Per-investigation limits; each may only lower (never raise) the tenant's and the server's limits."""

    # Strict: `"2"`, `2.0` or `true` are refused, as the schema says (integer).
    max_hops: StrictInt | None = Field(default=None, ge=1, le=10)
    max_retrieval_calls: StrictInt | None = Field(default=None, ge=1, le=500)
    max_llm_tokens: StrictInt | None = Field(default=None, ge=0, le=10_000_000)
    deadline_seconds: StrictInt | None = Field(default=None, ge=5, le=3600)


class Requester(_Strict):
    """Who asked (from the ticket or the caller); used by tools and customer-facing deliveries."""

    email: EmailStr | None = None
    name: str | None = Field(default=None, max_length=200)


class InvestigationContext(_Strict):
    """Facts about the asker the loop may use (never retrieved text): small, typed, size-capped."""

    requester: Requester | None = None
    account_id: str | None = Field(default=None, max_length=200)
    ticket_id: str | None = Field(default=None, max_length=200)
    attributes: dict[str, str] = Field(default_factory=dict, max_length=20,
                                       description="Other named facts (at most 20, each value ≤ 500 chars).")

    @field_validator("attributes")
    @classmethod
    def _small(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if len(key) > 100 or len(item) > 500:
                raise ValueError("attribute names are at most 100 and values at most 500 characters")
        return value


class InvestigationRequest(_Strict):
    """The body of ``POST /v1/investigations`` and what every other entry point submits."""

    question: str = Field(min_length=1, description="The question or ticket text, kept verbatim.")
    callback: Callbacks | None = Field(
        default=None,
        description="Where the answer goes: one callback, or a list (each delivered exactly once).",
    )
    mode: Literal["agentic", "single-shot"] = Mode.AGENTIC.value
    budget: BudgetOverride | None = None
    audience: Audience = Field(default="agent", description="Who reads the answer: internal documents "
                               "never reach a `customer` answer.")
    principals: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="ACL principals of the asker (documents with an `acl` need one).",
    )
    context: InvestigationContext | None = None

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if is_blank(value):
            raise ValueError("question is blank (only spaces or invisible characters)")
        return value

    @field_validator("principals")
    @classmethod
    def _principals(cls, value: list[str]) -> list[str]:
        if any(not p.strip() or len(p) > 200 for p in value):
            raise ValueError("each principal is a non-blank string of at most 200 characters")
        return value
