"""Faithful local stand-ins for services the tests cannot reach (e.g. the Anthropic Messages API)."""
