"""`sleuth chaos --scenario redis-restart-external --scale small`: the stack on an external Redis
(SLEUTH_REDIS_URL, append-only file on) that is SIGKILLed mid-run and started again on the same port."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_chaos import run_chaos


@pytest.mark.timeout(1200)
def test_an_external_redis_restarted_with_its_aof_loses_nothing(tmp_path: Path, embeddings_dir: Path) -> None:
    chaos = run_chaos(tmp_path, embeddings_dir, "redis-restart-external")
    chaos.assert_passed("redis-restart-external")
    figures = chaos.figures("redis-restart-external")
    assert figures["stuck past deadline"] == 0 and figures["duplicate deliveries"] == 0, chaos.shown
    assert isinstance(figures["redis back after s"], float), chaos.shown
