"""The HTTP executor of declared tools: render the request, send it with the tool's timeout through the
tenant's outbound guard, retry 5xx and connection errors with backoff, cap the response size, parse the
JSON and project it. The raw response never leaves this module: callers get the projected document.

`handle_request`-style seam: tests pass an httpx transport (or run real local services).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from investigation.errors import SleuthError, ValidationFailed
from investigation.tools.declaration import ToolDeclaration
from investigation.tools.projection import project
from investigation.tools.templates import render_url

USER_AGENT = "sleuth-tools/1"


@dataclass(frozen=True)
class CallResult:
    """One tool call: the projected document (all fields an agent may see), or the error that stopped it."""

    document: dict[str, Any] | None
    error: str | None
    status_code: int | None
    attempts: int
    ms: float
    retryable: bool = False  # the failure counts against the circuit breaker

    @property
    def ok(self) -> bool:
        return self.error is None


class _Failure(Exception):
    def __init__(self, message: str, *, status: int | None = None, retry: bool = False,
                 counts: bool = True) -> None:
        super().__init__(message)
        self.status, self.retry, self.counts = status, retry, counts


def _query_and_body(decl: ToolDeclaration, args: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    rest = {k: v for k, v in args.items() if k not in decl.url_variables}
    if decl.method == "GET":
        return {k: str(v) for k, v in rest.items()}, None
    return {}, rest


def _auth_headers(decl: ToolDeclaration, secret: str | None) -> dict[str, str]:
    if decl.auth.type == "none" or not secret:
        return {}
    if decl.auth.type == "bearer":
        return {"Authorization": f"Bearer {secret}"}
    if decl.auth.type == "basic":
        return {"Authorization": "Basic " + base64.b64encode(secret.encode()).decode("ascii")}
    return {str(decl.auth.header): secret}


class HttpToolExecutor:
    """Calls one declared tool. `transport` is the tenant's guarded transport; `sleep`/`clock` injectable."""

    def __init__(self, *, transport: httpx.BaseTransport | None = None, backoff_base: float = 0.2,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self._transport = transport
        self._backoff_base = backoff_base
        self._sleep = sleep
        self._clock = clock

    def call(self, decl: ToolDeclaration, args: Mapping[str, Any], *, secret: str | None) -> CallResult:
        started = self._clock()
        try:
            url = render_url(decl.url, args)
        except ValidationFailed as exc:  # a value that would reach another path: nothing is sent
            return CallResult(None, f"refused: {exc}", None, 0, self._ms(started))
        params, body = _query_and_body(decl, args)
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **_auth_headers(decl, secret)}
        attempts = 0
        last: _Failure | None = None
        with httpx.Client(transport=self._transport, timeout=decl.timeout, follow_redirects=False) as client:
            while attempts <= decl.retries:
                attempts += 1
                try:
                    payload = self._once(client, decl, url, params, body, headers, started)
                    document = project(payload, decl.stored_fields)
                    return CallResult(document, None, 200, attempts, self._ms(started))
                except _Failure as failure:
                    last = failure
                    if not failure.retry or attempts > decl.retries:
                        break
                    self._sleep(self._backoff_base * 2 ** (attempts - 1))
        assert last is not None
        return CallResult(None, str(last), last.status, attempts, self._ms(started), retryable=last.counts)

    def _ms(self, started: float) -> float:
        return round((self._clock() - started) * 1000, 2)

    def _once(self, client: httpx.Client, decl: ToolDeclaration, url: str, params: dict[str, Any],
              body: Any, headers: dict[str, str], started: float) -> Any:
        try:
            # The template's own query is kept; other GET arguments are merged into it.
            target = httpx.URL(url).copy_merge_params(params) if params else httpx.URL(url)
            with client.stream(decl.method, target, json=body, headers=headers) as response:
                status = response.status_code
                if status in (401, 403):
                    raise _Failure(f"the tool's credentials were refused (HTTP {status})", status=status,
                                   counts=False)
                if status >= 500:
                    raise _Failure(f"HTTP {status}", status=status, retry=True)
                if status >= 300:
                    raise _Failure(f"HTTP {status}", status=status, counts=False)
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw.extend(chunk)
                    if len(raw) > decl.max_response_bytes:
                        raise _Failure(f"response over {decl.max_response_bytes} bytes", status=status,
                                       counts=False)
                    if self._clock() - started > decl.timeout * (decl.retries + 1):
                        raise _Failure(f"timed out after {decl.timeout:g}s", status=status)
        except SleuthError as exc:  # the outbound guard refused the address: nothing was sent
            raise _Failure(f"refused: {exc}", counts=False) from None
        except httpx.TimeoutException:
            raise _Failure(f"timed out after {decl.timeout:g}s") from None
        except httpx.TransportError as exc:
            raise _Failure(f"could not connect ({type(exc).__name__})", retry=True) from None
        try:
            return json.loads(bytes(raw))
        except ValueError:
            raise _Failure("the response is not valid JSON", status=status, counts=False) from None
