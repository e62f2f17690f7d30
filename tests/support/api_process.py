"""A real `sleuth api` process for end-to-end tests (forked from the zygote of `tests/support/zygote.py`):
started on a free port, ready once /healthz answers, terminated (with its process group) on exit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support.http import free_port
from tests.support.wait import wait_until
from tests.support.zygote import spawn_sleuth


def _healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def api_process(env: dict[str, str], log_path: Path | None = None, timeout: float = 60) -> Iterator[str]:
    """Run `python -m cli.main api` with `env` (output to `log_path`, or discarded); yields its base URL."""
    from cli.supervisor import stop_group

    port = free_port()
    proc = spawn_sleuth(["api", "--port", str(port)], env, log_path)
    base = f"http://127.0.0.1:{port}"
    try:
        started = wait_until(lambda: _healthy(base) or proc.poll() is not None, timeout=timeout, interval=0.2)
        output = log_path.read_text(errors="replace")[-3000:] if log_path is not None else ""
        assert started and proc.poll() is None, f"`sleuth api` did not become healthy\n{output}"
        yield base
    finally:
        stop_group(proc, timeout=15)
