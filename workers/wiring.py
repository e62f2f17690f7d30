"""Moved: `Services` is the composition root in `bootstrap` now. This alias keeps branches written against
the old path importable during the move; import `bootstrap.Services` in new code."""

from bootstrap import Services

__all__ = ["Services"]
