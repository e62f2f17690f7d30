"""/metrics holds per-tenant ids and volumes: without SLEUTH_METRICS_TOKEN it is served only by an API
bound to loopback; with the token, only to a scrape that sends it. The same for a worker's exporter."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
from pydantic import SecretStr

from config.settings import Settings
from observability.exposition import is_loopback, start_worker_exporter
from tests.support.api_process import api_process
from tests.support.http import free_port


def _env(tmp_path: Path, db_url: str, redis_url: str, redis_prefix: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env.update(SLEUTH_HOME=str(tmp_path / "home"), SLEUTH_DATABASE_URL=db_url, SLEUTH_REDIS_URL=redis_url,
               SLEUTH_REDIS_PREFIX=redis_prefix, **extra)
    return env


def test_loopback_addresses() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "", "::", "10.0.0.5", "api.example.com"))


def test_an_api_bound_to_every_interface_wants_the_token(tmp_path: Path, db_url: str, redis_url: str,
                                                        redis_prefix: str) -> None:
    with api_process(_env(tmp_path, db_url, redis_url, redis_prefix, SLEUTH_API_HOST="0.0.0.0")) as base:
        refused = httpx.get(f"{base}/metrics", timeout=10)
        assert refused.status_code == 401 and "SLEUTH_METRICS_TOKEN" in refused.text
        assert "sleuth_" not in refused.text


def test_with_the_token_set_a_scrape_must_send_it(tmp_path: Path, db_url: str, redis_url: str,
                                                  redis_prefix: str) -> None:
    env = _env(
        tmp_path, db_url, redis_url, redis_prefix, SLEUTH_API_HOST="0.0.0.0", SLEUTH_METRICS_TOKEN="m3tr1cs"
    )
    with api_process(env) as base:
        assert (
            httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer nope"}, timeout=10).status_code
            == 401
        )
        assert (
            httpx.get(f"{base}/metrics", headers={"Authorization": "Basic m3tr1cs"}, timeout=10).status_code
            == 401
        )
        ok = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer m3tr1cs"}, timeout=10)
        assert ok.status_code == 200 and "sleuth_queue_depth" in ok.text


def test_an_api_on_loopback_serves_the_metrics_without_a_token(tmp_path: Path, db_url: str, redis_url: str,
                                                               redis_prefix: str) -> None:
    with api_process(_env(tmp_path, db_url, redis_url, redis_prefix)) as base:  # SLEUTH_API_HOST: 127.0.0.1
        assert httpx.get(f"{base}/metrics", timeout=10).status_code == 200


def test_a_worker_exporter_on_every_interface_wants_the_token(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings(home=tmp_path / "home", metrics_port=port, metrics_token=SecretStr("w0rker"))
    assert start_worker_exporter(settings) == port
    url = f"http://127.0.0.1:{port}/metrics"
    assert httpx.get(url, timeout=10).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Bearer w0rker"}, timeout=10).status_code == 200
    open_port = free_port()
    assert start_worker_exporter(Settings(home=tmp_path / "home", metrics_port=open_port)) == open_port
    # no token: closed
    assert httpx.get(f"http://127.0.0.1:{open_port}/metrics", timeout=10).status_code == 401
