"""`/v1/sources` with the tenant's API key: declare, sync on a real worker's `sources` queue, list, metrics,
remove (documents leave every engine); bad input named."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from api.app import create_app
from tests.support.stack import Stack
from tests.support.wait import wait_until
from workers import names


def test_sources_over_http(stack: Stack, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vpn.md").write_text("# VPN\n\nConnect to the VPN with the ocelot client.", encoding="utf-8")
    stack.start_worker(concurrency=1, queues=names.Q_SOURCES)
    stack.wait_ready()
    auth = {"authorization": f"Bearer {stack.api_key}"}
    with TestClient(create_app(services=stack.services, launcher=lambda _: None)) as client:
        assert client.get("/v1/sources").status_code == 401
        bad = client.post("/v1/sources", json={"name": "x", "type": "ftp"}, headers=auth)
        assert bad.status_code == 422 and "type" in bad.text
        created = client.post(
            "/v1/sources", json={"name": "kb", "type": "folder", "path": str(docs)}, headers=auth
        )
        assert created.status_code == 201, created.text
        assert client.post("/v1/sources/nope/sync", headers=auth).status_code == 404
        assert client.post("/v1/sources/kb/sync", headers=auth).status_code == 202

        def synced() -> bool:
            views = client.get("/v1/sources", headers=auth).json()["sources"]
            return bool(views[0]["last_success_at"])

        assert wait_until(synced, timeout=90)
        view = client.get("/v1/sources", headers=auth).json()["sources"][0]
        assert view["items"] == 1 and view["last_stats"]["added"] == 1 and view["last_error"] is None
        metrics = client.get("/metrics").text
        assert f'sleuth_source_items{{source="kb",tenant="{stack.tenant_id}",type="folder"}} 1.0' in metrics
        assert "sleuth_source_seconds_since_success{" in metrics
        assert stack.services.backends["bm25"].search(stack.tenant_id, "ocelot client", 3)
        assert client.delete("/v1/sources/kb", headers=auth).status_code == 204
        assert client.get("/v1/sources", headers=auth).json()["sources"] == []
    for backend in stack.services.backends.values():
        assert not any(
            p.source_id.startswith("src_") for p in backend.search(stack.tenant_id, "ocelot client", 5)
        )
