"""Ratings from the people who read answers: through a signed link (no API key), with the API key, and
(`app.outcomes`) from helpdesk tags; each one recorded as the rater's current rating (docs/feedback.md)."""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bootstrap import Services
from investigation.errors import Forbidden, NotFound
from storage import repositories as repo
from storage.feedback_models import COMMENT_MAX_CHARS, RATER_MAX_CHARS, RATINGS, Feedback
from storage.models import Investigation, Tenant
from storage.rating_links import RatingClaims, feedback_links, rating_token, verify_rating
from storage.signing_key import secret_key

Rating = Literal["helpful", "partly", "wrong"]


class FeedbackCreate(BaseModel):
    """`POST /v1/investigations/{id}/feedback`: a rating, and optionally why and what the answer should be."""

    model_config = ConfigDict(extra="forbid")

    rating: Rating
    comment: str | None = Field(default=None, max_length=COMMENT_MAX_CHARS)
    correct_answer: str | None = Field(default=None, max_length=COMMENT_MAX_CHARS)
    rater: str = Field(default="api", min_length=1, max_length=RATER_MAX_CHARS)


class LinkRefused(Forbidden):
    """Raised when a rating link is forged, expired, or names an investigation its tenant does not have."""


@dataclass(frozen=True)
class RatingLink:
    """A verified link: whose investigation, who rates, and (for the page's form) its CSRF token."""

    claims: RatingClaims
    csrf: str
    investigation: Investigation


def feedback_view(row: Feedback) -> dict[str, object]:
    return {"id": row.id, "investigation_id": row.investigation_id, "rating": row.rating, "rater": row.rater,
            "comment": row.comment, "correct_answer": row.correct_answer, "source": row.source,
            "created_at": row.created_at.isoformat() + "Z"}


def _form_token(services: Services, token: str) -> str:
    """The page form's CSRF token: bound to the link, so only a page this server rendered for it can post."""
    return hmac.new(
        secret_key(services.settings), b"rate-form:" + token.encode(), hashlib.sha256
    ).hexdigest()[:32]


def open_link(services: Services, token: str, *, now: float | None = None) -> RatingLink:
    """The verified link; LinkRefused for a forged or expired token, or one whose investigation is gone or
    belongs to another tenant. Reads nothing else and records nothing."""
    claims = verify_rating(secret_key(services.settings), token, now=time.time() if now is None else now)
    if claims is None:
        raise LinkRefused("this rating link is not valid or has expired")
    with services.session() as session:
        try:
            inv = repo.get_investigation(session, investigation_id=claims.investigation_id,
                                         tenant_id=claims.tenant_id)
        except NotFound:
            raise LinkRefused("this rating link is not valid") from None
        inv = Investigation.model_validate(inv.model_dump())
    return RatingLink(claims, _form_token(services, token), inv)


def form_ok(services: Services, token: str, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(str(given), _form_token(services, token))


def rate_with_link(services: Services, link: RatingLink, *, rating: str, comment: str | None,
                   correct_answer: str | None) -> Feedback:
    with services.session() as session:
        try:
            return repo.record_feedback(
                session,
                tenant_id=link.claims.tenant_id,
                investigation_id=link.claims.investigation_id,
                rater=link.claims.rater,
                rating=rating,
                source="link",
                comment=comment,
                correct_answer=correct_answer,
            )
        except NotFound:
            raise LinkRefused("this rating link is not valid") from None


def rate_with_key(services: Services, *, tenant: Tenant, investigation_id: str,
                  body: FeedbackCreate) -> tuple[Feedback, str | None]:
    """A rating through the API, and the investigation's route; NotFound for another tenant's
    investigation."""
    with services.session() as session:
        row = repo.record_feedback(session, tenant_id=tenant.id, investigation_id=investigation_id,
                                   rater=body.rater, rating=body.rating, source="api", comment=body.comment,
                                   correct_answer=body.correct_answer)
        route = repo.get_investigation(session, investigation_id=investigation_id).route
    return row, route


def links_for(services: Services, *, tenant_id: str, investigation_id: str, rater: str) -> dict[str, str]:
    """Rating links for a page that shows an answer (the trace page): absolute under the public URL, else
    this server's own path."""
    token = rating_token(
        secret_key(services.settings), tenant_id=tenant_id, investigation_id=investigation_id, rater=rater
    )
    return feedback_links(services.settings.public_url or "", token)


__all__ = ["RATINGS", "FeedbackCreate", "LinkRefused", "RatingLink", "feedback_view", "form_ok", "links_for",
           "open_link", "rate_with_key", "rate_with_link"]
