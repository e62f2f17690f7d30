"""Rating tokens: genuine ones verify for 30 days; forged, tampered, expired, or console-link tokens do not;
the links name the three ratings."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from storage.rating_links import RATING_TTL_SECONDS, feedback_links, rating_token, verify_rating

KEY = b"k" * 32
NOW = 1_800_000_000.0


def _token(**kw: str) -> str:
    args = {"tenant_id": "t1", "investigation_id": "inv1", "rater": "email:ann@acme.test", **kw}
    return rating_token(KEY, now=NOW, **args)


def test_a_genuine_token_verifies_until_it_expires() -> None:
    claims = verify_rating(KEY, _token(), now=NOW + RATING_TTL_SECONDS - 1)
    assert claims is not None
    assert (claims.tenant_id, claims.investigation_id, claims.rater) == ("t1", "inv1", "email:ann@acme.test")
    assert verify_rating(KEY, _token(), now=NOW + RATING_TTL_SECONDS + 1) is None


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),       # MAC changed
    lambda t: "eyJ0IjoidDIifQ" + t[t.index("."):],                     # body swapped
    lambda t: t.split(".")[0],                                          # no MAC
    lambda t: "",
    lambda t: "a.b.c",
])
def test_forged_or_tampered_tokens_do_not_verify(mangle: object) -> None:
    assert callable(mangle)
    assert verify_rating(KEY, mangle(_token()), now=NOW) is None


def test_another_key_or_a_console_link_does_not_verify() -> None:
    assert verify_rating(b"other" * 8, _token(), now=NOW) is None
    # A console link is HMAC(key, body) without the rating domain: never a rating token.
    claims = json.dumps({"t": "t1", "i": "inv1", "r": "x", "e": NOW + 99}).encode()
    body = base64.urlsafe_b64encode(claims).decode().rstrip("=")
    mac = base64.urlsafe_b64encode(hmac.new(KEY, body.encode(), hashlib.sha256).digest()).decode().rstrip("=")
    assert verify_rating(KEY, f"{body}.{mac}", now=NOW) is None


def test_the_links_name_each_rating() -> None:
    links = feedback_links("https://sleuth.acme.test/", "abc.def")
    assert links == {"feedback_url": "https://sleuth.acme.test/r/abc.def",
                     "helpful": "https://sleuth.acme.test/r/abc.def?rating=helpful",
                     "partly": "https://sleuth.acme.test/r/abc.def?rating=partly",
                     "wrong": "https://sleuth.acme.test/r/abc.def?rating=wrong"}
