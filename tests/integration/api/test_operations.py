"""Operator endpoints: /docs and /redoc from installed assets (no CDN), /metrics (optionally
token-guarded)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from api.app import create_app
from bootstrap import Services
from tests.integration.api.conftest import Api, make_settings


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_every_asset_from_this_server(api: Api, page: str) -> None:
    html = api.client.get(page)
    assert html.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]+)"', html.text) + re.findall(r"url: '([^']+)'", html.text)
    scripts = [u for u in urls if u.endswith((".js", ".css"))]
    assert scripts, html.text
    for url in scripts:
        assert url.startswith("/static/docs/"), f"{page} loads {url} from elsewhere"
        asset = api.client.get(url)
        assert asset.status_code == 200 and len(asset.content) > 10_000
    assert "cdn" not in html.text.lower() and "googleapis" not in html.text
    assert api.client.get("/openapi.json").status_code == 200


def test_metrics_endpoint_speaks_prometheus(api: Api) -> None:
    response = api.client.get("/metrics")
    assert response.status_code == 200
    names = {f.name for f in text_string_to_metric_families(response.text)}
    assert "sleuth_queue_depth" in names


def test_metrics_token_is_enforced_when_set(tmp_path: Path, db_url: str, redis_url: str,
                                            redis_prefix: str) -> None:
    services = Services(make_settings(tmp_path / "home", db_url, redis_url, redis_prefix,
                                      metrics_token="s3cret"))
    with TestClient(create_app(services=services, launcher=lambda _: None)) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    services.engine.dispose()
