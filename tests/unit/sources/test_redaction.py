"""Personal data out of ticket text: e-mails, phone numbers, Luhn-valid card numbers (made-up data only)."""

from __future__ import annotations

from investigation.sources.redaction import CARD, EMAIL, PHONE, luhn_valid, redact


def test_luhn() -> None:
    assert luhn_valid("4111111111111111")  # the well-known Visa test number
    assert luhn_valid("5555555555554444")
    assert not luhn_valid("4111111111111112")
    assert not luhn_valid("41111x")


def test_emails_phones_and_cards_are_redacted() -> None:
    text = ("Hi, I'm jane.doe+test@example.org, call me on +1 (555) 010-4477 or 020 7946 0958. "
            "My card 4111 1111 1111 1111 was charged twice; the other one is 5555-5555-5555-4444.")
    out = redact(text)
    assert "example.org" not in out and out.count(EMAIL) == 1
    assert out.count(CARD) == 2 and "4111" not in out and "4444" not in out
    assert out.count(PHONE) == 2 and "7946" not in out and "010-4477" not in out


def test_numbers_that_are_not_personal_stay() -> None:
    text = "Order 4111111111111112 (not a valid card), invoice 20240117, released 2024-01-17 from 10.0.0.12."
    assert redact(text) == text
