"""Every response the API can give, documented: the error statuses of `api.errors` added to each
operation of the OpenAPI schema (so a client, or schemathesis, finds no undocumented response)."""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {"title": "Error", "type": "object", "required": ["detail"],
                "properties": {"detail": {"type": "string", "description": "What went wrong, for a person."}}}
_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
_VALIDATION = {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}}

COMMON = {
    "401": "No API key, or one that matches no tenant (`WWW-Authenticate: Bearer`)",
    "403": "Authenticated, but this tenant may not do that",
    "429": ("Over the tenant's intake rate or a budget, or too many bad API keys from this address; "
            "`Retry-After` says when to retry"),
    "503": "A dependency (database, queue) is unavailable; `Retry-After` when known",
}
WITH_ID = {"404": "No such resource for this tenant (another tenant's ids are not found either)"}
WITH_INPUT = {"400": "A request that cannot be served (bad configuration for it)",
              "422": "An invalid field, named in `detail[].loc`"}
WRITES = {
    "408": "The body did not arrive within `SLEUTH_REQUEST_BODY_TIMEOUT` seconds (the connection is closed)",
    "409": "The Idempotency-Key was already used for a different request",
    "413": "The body is larger than the server accepts",
}
_PUBLIC = ("/healthz", "/readyz", "/metrics", "/docs", "/redoc", "/openapi.json")


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the error responses each operation can produce (existing entries are kept)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault("Error", ERROR_SCHEMA)
    if "HTTPValidationError" not in components:
        components["ValidationError"] = {
            "title": "ValidationError",
            "type": "object",
            "required": ["loc", "msg", "type"],
            "properties": {
                "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                "msg": {"type": "string"},
                "type": {"type": "string"},
            },
        }
        components["HTTPValidationError"] = {
            "title": "HTTPValidationError",
            "type": "object",
            "properties": {
                "detail": {"type": "array", "items": {"$ref": "#/components/schemas/ValidationError"}}
            },
        }
    for path, operations in schema.get("paths", {}).items():
        if path in _PUBLIC:
            continue
        for method, op in operations.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            wanted = dict(COMMON)
            wanted.update(WITH_INPUT)  # headers and query parameters are validated on every route
            if "{" in path:
                wanted.update(WITH_ID)
            if method in ("post", "put", "patch", "delete"):
                wanted.update(WRITES)
                wanted.update(WITH_ID)
            responses = op["responses"]
            for code, description in wanted.items():
                if code in responses:
                    responses[code].setdefault("content", _VALIDATION if code == "422" else _ERROR)
                    continue
                responses[code] = {"description": description,
                                   "content": _VALIDATION if code == "422" else _ERROR}
    return schema
