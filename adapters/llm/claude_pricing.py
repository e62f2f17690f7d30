"""Public list prices of the configured Claude models (USD per million tokens) and the cost of usage.

Sources (platform.claude.com model pages and migration guides, read 2026-10): Claude Haiku 5.5 $0.10 in /
$0.50 out / $0.01 cache read for prompts up to 100K tokens; Claude Sonnet 5.5 $2 in / $10 out / $2.50
5-minute cache write / $0.10 cache read. A 5-minute cache write costs 1.25× the input price.
Prices change: this table is for reports, never for billing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float


PRICES: dict[str, Price] = {
    "claude-haiku-5-5": Price(input=0.10, output=0.50, cache_write=0.125, cache_read=0.01),
    "claude-sonnet-5-5": Price(input=2.00, output=10.00, cache_write=2.50, cache_read=0.10),
    "claude-opus-5-5": Price(input=4.00, output=20.00, cache_write=5.00, cache_read=0.20),
    "claude-haiku-4-5": Price(input=1.00, output=5.00, cache_write=1.25, cache_read=0.10),
}


def price_of(model: str) -> Price | None:
    """The list price of `model` (dated snapshots such as claude-haiku-4-5-20251001 match their family)."""
    for name, price in PRICES.items():
        if model == name or model.startswith(name + "-"):
            return price
    return None


def cost(model: str, usage: Mapping[str, int]) -> float | None:
    """USD of one call's usage block (None for an unknown model)."""
    price = price_of(model)
    if price is None:
        return None
    return (usage.get("input_tokens", 0) * price.input + usage.get("output_tokens", 0) * price.output
            + usage.get("cache_creation_input_tokens", 0) * price.cache_write
            + usage.get("cache_read_input_tokens", 0) * price.cache_read) / 1_000_000
