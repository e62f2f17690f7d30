"""No secret in any log line: a logging filter that masks API keys, webhook secrets, ``?key=``-style
query parameters and token-bearing paths (sign-in links ``/link/…``, rating links ``/r/…``,
``/feedback/…``) before a record is formatted (uvicorn's access log prints the full request path)."""

from __future__ import annotations

import logging
import re

# `?key=sk_…` / `&token=…` in a path or URL, and bare Sleuth secrets wherever they appear.
_QUERY_SECRET = re.compile(
    r"(?i)([?&](?:key|api_key|apikey|token|access_token|secret|password|csrf|sig|signature|nonce)=)[^&#\s\"']*")
# A path segment after one of these is a credential in itself (single-use links, signed rating links).
_PATH_SECRET = re.compile(r"(/(?:link|r|feedback)/)[^/?#\s\"']+")
_BARE_SECRET = re.compile(r"\b(sk_|whsec_)[A-Za-z0-9_\-+/=]{6,}")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-.+/=]{6,}")
MASK = "***"


def redact(text: str) -> str:
    """`text` with every secret it carries replaced by ``***`` (the `sk_`/`whsec_` prefix is kept)."""
    text = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, text)
    text = _PATH_SECRET.sub(lambda m: m.group(1) + MASK, text)
    text = _BARE_SECRET.sub(lambda m: m.group(1) + MASK, text)
    return _BEARER.sub(lambda m: m.group(1) + MASK, text)


class RedactSecrets(logging.Filter):
    """Rewrites a record's message and string arguments in place; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn", "fastapi", "api", "celery", "sleuth")
_FILTER = RedactSecrets()


def install(names: tuple[str, ...] = LOGGERS) -> None:
    """Attach the filter to Sleuth's and uvicorn's loggers (idempotent). Filters on a logger see only
    records logged through it, so the access logger is named explicitly."""
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    root = logging.getLogger()
    for handler in root.handlers:  # records of any other logger pass through the root's handlers
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
