"""Standard Webhooks signing: the published test vector, verification, Retry-After parsing."""

from __future__ import annotations

import pytest

from adapters.delivery.webhook import InvalidSignature, parse_retry_after, sign, verify

# The Standard Webhooks reference test vector (same in every reference library).
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
EXPECTED = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def _headers(signature: str = EXPECTED, **over: str) -> dict[str, str]:
    headers = {"webhook-id": MSG_ID, "webhook-timestamp": str(TIMESTAMP), "webhook-signature": signature}
    headers.update(over)
    return headers


def test_reference_vector() -> None:
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == EXPECTED


def test_verify_accepts_valid_and_any_of_several_signatures() -> None:
    verify(SECRET, _headers(), BODY, now=TIMESTAMP)
    verify(SECRET, _headers(f"v1,bm9wZQ== v2,xyz {EXPECTED}"), BODY, now=TIMESTAMP + 299)
    verify(SECRET, {k.title(): v for k, v in _headers().items()}, BODY, now=TIMESTAMP)


@pytest.mark.parametrize(("headers", "body", "now"), [
    (_headers(), BODY + b" ", TIMESTAMP),                                  # tampered body
    (_headers("v1,bm9wZQ=="), BODY, TIMESTAMP),                            # wrong signature
    (_headers(EXPECTED.replace("v1", "v2")), BODY, TIMESTAMP),             # unknown version
    (_headers(**{"webhook-id": "msg_other"}), BODY, TIMESTAMP),            # id not the signed one
    (_headers(), BODY, TIMESTAMP + 301),                                   # too old
    (_headers(), BODY, TIMESTAMP - 301),                                   # from the future
    ({"webhook-id": MSG_ID, "webhook-signature": EXPECTED}, BODY, TIMESTAMP),  # missing header
    (_headers(**{"webhook-timestamp": "soon"}), BODY, TIMESTAMP),
])
def test_verify_rejects(headers: dict[str, str], body: bytes, now: int) -> None:
    with pytest.raises(InvalidSignature):
        verify(SECRET, headers, body, now=now)


def test_wrong_secret_is_rejected() -> None:
    with pytest.raises(InvalidSignature):
        verify("whsec_" + "A" * 32, _headers(), BODY, now=TIMESTAMP)


def test_retry_after_forms() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("-5") == 0.0
