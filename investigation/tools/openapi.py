"""Import one OpenAPI 3 operation as a tool declaration draft (the caller adds sources and projection).

Path and query parameters become parameters (their `schema` kept); each is taken from the context when
its name matches a context field (`account_id`, `ticket_id`, `email` → requester.email), else from the
question. The projection defaults to the top-level properties of the 200 response's JSON schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from investigation.errors import ValidationFailed

_CONTEXT_NAMES = {"account_id": "context.account_id", "ticket_id": "context.ticket_id",
                  "email": "context.requester.email", "requester_email": "context.requester.email"}


def _resolve(spec: Mapping[str, Any], node: Any) -> Any:
    seen = 0
    while isinstance(node, Mapping) and "$ref" in node and seen < 10:
        ref = str(node["$ref"])
        if not ref.startswith("#/"):
            raise ValidationFailed("openapi", f"only local $ref are supported, not {ref}")
        target: Any = spec
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        node, seen = target, seen + 1
    return node


def import_operation(spec: Mapping[str, Any], operation_id: str) -> dict[str, Any]:
    """A declaration dict for `operation_id` (validate it with `parse_declaration`)."""
    servers = spec.get("servers") or [{}]
    base = str(servers[0].get("url", "")).rstrip("/")
    for path, item in (spec.get("paths") or {}).items():
        for method, op in (item or {}).items():
            if not isinstance(op, Mapping) or op.get("operationId") != operation_id:
                continue
            if method.upper() not in ("GET", "POST"):
                raise ValidationFailed("openapi", f"{operation_id} is a {method.upper()}; only GET and POST")
            params: dict[str, Any] = {}
            query: list[str] = []
            for raw in [*(item.get("parameters") or []), *(op.get("parameters") or [])]:
                param = _resolve(spec, raw)
                if param.get("in") not in ("path", "query"):
                    continue
                name = str(param["name"])
                schema = dict(_resolve(spec, param.get("schema") or {"type": "string"}))
                params[name] = {"schema": schema, "source": _CONTEXT_NAMES.get(name, "question"),
                                "required": bool(param.get("required", param.get("in") == "path")),
                                "description": str(param.get("description", ""))[:300]}
                if param.get("in") == "query":
                    query.append(name)
            url = base + path + ("?" + "&".join(f"{q}={{{q}}}" for q in query) if query else "")
            response = ((op.get("responses") or {}).get("200") or {})
            content = _resolve(spec, response).get("content", {}) if isinstance(response, Mapping) else {}
            schema = _resolve(spec, (content.get("application/json") or {}).get("schema") or {})
            fields = sorted((schema.get("properties") or {}).keys()) if isinstance(schema, Mapping) else []
            description = str(op.get("description") or op.get("summary") or operation_id)
            return {"name": operation_id.replace("-", "_").lower()[:63], "description": description[:1000],
                    "method": method.upper(), "url": url, "params": params,
                    "projection": fields or ["id"], "title": str(op.get("summary") or operation_id)[:300]}
    raise ValidationFailed("openapi", f"no operation with operationId {operation_id!r}")
