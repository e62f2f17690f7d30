"""Metrics, logs and ids from a real Celery worker: the API's /metrics shows what the worker's pool
processes counted (multiprocess directory), and every task log line carries the investigation's ids."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.tasks.conftest import Stack
from tests.support.zygote import spawn_sleuth
from workers.names import ALL_QUEUES


def _samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    return [(s.name, dict(s.labels), s.value) for family in text_string_to_metric_families(text)
            for s in family.samples]


def _value(samples: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    return sum(v for n, lab, v in samples if n == name and all(lab.get(k) == x for k, x in labels.items()))


def _start_worker(stack: Stack, log_path: Path) -> subprocess.Popen[bytes]:
    args = ["worker", "--concurrency", "2", "--name", "obs", "--loglevel", "INFO"]
    proc = spawn_sleuth(args, stack.env(SLEUTH_LOG_FORMAT="json"), log_path)
    stack.workers.append(proc)
    return proc


def test_worker_metrics_reach_the_api_scrape_and_logs_carry_ids(stack: Stack) -> None:
    from api.app import create_app
    from observability import metrics

    log_path = stack.settings.home / "worker-obs.log"
    _start_worker(stack, log_path)
    stack.wait_ready()
    answered = stack.wait(stack.ask("Which plan includes SCIM provisioning?"))
    greeted = stack.wait(stack.ask("Good morning!"))
    assert answered["status"] == "answered" and greeted["status"] in ("answered", "refused")

    metrics._reset_for_tests()
    with TestClient(create_app(services=stack.services, launcher=lambda _: None)) as client:
        # A pool process counts an investigation once its terminal state has committed (an observer of the
        # commit), so the status can be seen a moment before the counts: stopping the worker in that moment
        # lost them (seen under a loaded host). The worker's counts are live in the multiprocess directory.
        deadline = time.monotonic() + 60
        while True:
            response = client.get("/metrics")
            assert response.status_code == 200
            samples = _samples(response.text)
            if (
                _value(samples, "sleuth_investigation_duration_seconds_count") >= 2
                or time.monotonic() > deadline
            ):
                break
            time.sleep(0.05)
    assert response.headers["content-type"].startswith("text/plain")
    stack.stop_workers()  # the log is complete
    tenant = stack.tenant_id
    assert _value(samples, "sleuth_investigations_total", status="answered", tenant=tenant) >= 1
    assert _value(samples, "sleuth_investigations_total", route="direct") == 1
    assert _value(samples, "sleuth_investigation_duration_seconds_count") == 2
    assert _value(samples, "sleuth_step_duration_seconds_count", step="retrieve") >= 2
    assert _value(samples, "sleuth_step_duration_seconds_count", step="reduce") >= 1
    assert _value(samples, "sleuth_intake_to_start_seconds_count") == 2
    assert _value(samples, "sleuth_task_queue_wait_seconds_count", task="sleuth.retrieve") >= 2
    assert _value(samples, "sleuth_retrieval_calls_total", engine="bm25") >= 1
    assert _value(samples, "sleuth_retrieval_duration_seconds_count", engine="vector") >= 1
    assert _value(samples, "sleuth_hop_duration_seconds_count") >= 1
    assert _value(samples, "sleuth_investigation_retrieval_calls_count") == 2
    queues = {lab["queue"] for n, lab, _ in samples if n == "sleuth_queue_depth"}
    assert queues == set(ALL_QUEUES)

    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    task_lines = [line for line in lines if line.get("logger") == "sleuth.tasks"]
    assert task_lines, log_path.read_text()[-2000:]
    for line in task_lines:
        assert {"investigation_id", "tenant_id", "task_id", "hop"} <= set(line), line
        assert line["tenant_id"] == tenant
    question_words = "SCIM provisioning"
    assert not [line for line in lines if question_words in json.dumps(line)], "question text logged at INFO"
    assert not [line for line in lines if line.get("logger", "").startswith("alembic")]
    assert not [line for line in lines if "watchdog" in json.dumps(line)]
