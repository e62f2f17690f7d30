"""Personal data taken out of ticket text before it is indexed: e-mail addresses, phone numbers and card-like
numbers (13-19 digits that pass the Luhn check; other long numbers, such as order ids, stay)."""

from __future__ import annotations

import re

EMAIL = "[email]"
PHONE = "[phone]"
CARD = "[card]"

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
# Digit runs with the separators people type in card numbers (spaces, dashes).
_CARDLIKE = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
# A phone number: optional +country, digits grouped by spaces, dots, dashes or parentheses, 7-15 digits.
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){1,4}(?![\w-])"
)


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a string of digits (what every payment card number satisfies)."""
    if not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    return CARD if 13 <= len(digits) <= 19 and luhn_valid(digits) else match.group(0)


_NOT_PHONE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,3}(?:\.\d{1,3}){3}")  # ISO dates, IPv4 addresses


def _phone(match: re.Match[str]) -> str:
    text = match.group(0)
    if _NOT_PHONE.fullmatch(text):
        return text
    digits = re.sub(r"\D", "", text)
    # A bare run of digits without a + or separators is a number (an order id, an amount), not a phone.
    separated = text.startswith("+") or any(c in text for c in " .-()")
    return PHONE if 7 <= len(digits) <= 15 and separated else text


def redact(text: str) -> str:
    """`text` with e-mail addresses, Luhn-valid card numbers and phone numbers replaced by placeholders."""
    text = _EMAIL.sub(EMAIL, text)
    text = _CARDLIKE.sub(_card, text)
    return _PHONE.sub(_phone, text)
