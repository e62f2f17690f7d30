"""Reading back: the public view, the ordered trace, live SSE progress, the HTML trace page."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from storage import repositories as repo
from tests.integration.api.conftest import Api


def _create(api: Api, question: str = "Which region keeps data in Germany?") -> str:
    response = api.post(
        {"question": question, "callback": {"type": "webhook", "url": "https://hooks.example.com/h"}}
    )
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def _event(api: Api, inv_id: str, step: str, kind: str, hop: int = 0, **data: Any) -> None:
    with api.services.session() as session:
        repo.add_event(session, investigation_id=inv_id, step_key=step, kind=kind, hop=hop, data=data)


def _finish(api: Api, inv_id: str, answer: str = "Frankfurt [1].") -> None:
    with api.services.session() as session:
        repo.finish_investigation(
            session,
            investigation_id=inv_id,
            status="answered",
            stop_reason="sufficient",
            answer=answer,
            citations=[{"marker": 1, "evidence_id": "e1", "source_id": "frankfurt", "title": "Frankfurt"}],
        )


def test_view_is_the_public_json(api: Api) -> None:
    inv_id = _create(api)
    _finish(api, inv_id)
    view = api.client.get(f"/v1/investigations/{inv_id}", headers=api.auth()).json()
    assert view["id"] == inv_id and view["status"] == "answered" and view["answer"] == "Frankfurt [1]."
    assert view["citations"] == [{"marker": 1, "evidence_id": "e1", "source_id": "frankfurt",
                                  "title": "Frankfurt", "internal": False}]
    for key in ("route", "evidence", "subqueries", "hops", "retrieval_calls", "stop_reason", "deliveries"):
        assert key in view


def test_view_body_is_what_fastapi_would_render_byte_for_byte(api: Api) -> None:
    """The route returns the validated view as a JSONResponse rather than handing it to FastAPI to validate
    again: the bytes must be those FastAPI rendered before (floats as Python writes them: 1e-05, not the
    0.00001 of pydantic's own JSON)."""
    from fastapi.responses import JSONResponse

    from investigation.state import Evidence, Grade

    inv_id = _create(api, "Où sont stockées les données — région de Francfort ?")
    with api.services.session() as session:
        repo.add_evidence(
            session,
            investigation_id=inv_id,
            evidence=[
                Evidence(
                    id=f"e{i}",
                    chunk_id=f"frankfurt#{i}",
                    source_id="frankfurt",
                    title="Région « Francfort »",
                    text="Les données restent en Allemagne ✓",
                    score=score,
                    grade=Grade.CORRECT,
                    hop=1,
                    query="données Francfort",
                    url="https://kb.example.com/frankfurt",
                )
                for i, score in enumerate([0.1 + 0.2, 1e-05, 0.8333333333333334, 12.0])
            ],
        )
    _finish(api, inv_id, answer="Francfort [1] — 99,95 %.")
    response = api.client.get(f"/v1/investigations/{inv_id}", headers=api.auth())
    with api.services.session() as session:
        view = repo.investigation_view(
            session, investigation=repo.get_investigation(session, investigation_id=inv_id)
        )
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.content == JSONResponse(view).body
    assert len(response.json()["evidence"]) == 4


def test_trace_lists_events_in_write_order(api: Api) -> None:
    inv_id = _create(api)
    steps = [("route", "route"), ("plan", "plan"), ("hop:1", "hop"), ("retrieve:1:0", "retrieval"),
             ("grade:1", "grades"), ("decide:1", "decision")]
    for step, kind in steps:
        _event(api, inv_id, step, kind, hop=0 if kind in ("route", "plan") else 1)
    _event(api, inv_id, "route", "route", note="a redelivered step is not written twice")
    trace = api.client.get(f"/v1/investigations/{inv_id}/trace", headers=api.auth()).json()
    assert trace["id"] == inv_id
    assert [e["kind"] for e in trace["events"]] == [k for _, k in steps]
    ids = [e["id"] for e in trace["events"]]
    assert ids == sorted(ids)


def _read_sse(api: Api, inv_id: str, on_event: Callable[[dict[str, Any]], None] | None = None,
              **headers: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    with api.client.stream("GET", f"/v1/investigations/{inv_id}/events", headers=api.auth(**headers)) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if not line:
                if current:
                    events.append(current)
                    if on_event is not None:
                        on_event(current)
                    if current.get("event") == "end":
                        break
                current = {}
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            current[name] = value.lstrip(" ")
    return events


@pytest.mark.timeout(30)
def test_sse_streams_events_as_written_then_end(api: Api) -> None:
    inv_id = _create(api)
    _event(api, inv_id, "route", "route", route="lookup")

    received = {"route": threading.Event(), "plan": threading.Event()}
    streamed: list[bool] = []

    def on_event(event: dict[str, Any]) -> None:
        if event.get("event") == "trace" and (kind := json.loads(event["data"])["kind"]) in received:
            received[kind].set()

    def worker() -> None:  # the investigation progresses while the client listens
        streamed.append(received["route"].wait(10))  # the client has the first event before the next exists
        _event(api, inv_id, "plan", "plan", plan_kind="as_is")
        streamed.append(received["plan"].wait(10))
        _event(api, inv_id, "synthesis", "synthesis", status="answered")
        _finish(api, inv_id)

    thread = threading.Thread(target=worker)
    thread.start()
    events = _read_sse(api, inv_id, on_event=on_event)
    thread.join()
    assert streamed == [True, True]  # each event reached the client as it was written, not at the end
    assert [e["event"] for e in events] == ["trace", "trace", "trace", "end"]
    kinds = [json.loads(e["data"])["kind"] for e in events[:-1]]
    assert kinds == ["route", "plan", "synthesis"]
    assert json.loads(events[-1]["data"]) == {"id": inv_id, "status": "answered"}
    ids = [int(e["id"]) for e in events[:-1]]
    assert ids == sorted(ids)


@pytest.mark.timeout(30)
def test_sse_resumes_after_last_event_id(api: Api) -> None:
    inv_id = _create(api)
    for step in ("route", "plan", "hop:1"):
        _event(api, inv_id, step, step.split(":")[0])
    _finish(api, inv_id)
    everything = _read_sse(api, inv_id)
    first_id = everything[0]["id"]
    resumed = _read_sse(api, inv_id, **{"Last-Event-ID": first_id})
    assert [json.loads(e["data"])["kind"] for e in resumed[:-1]] == ["plan", "hop"]
    assert resumed[-1]["event"] == "end"


def test_trace_page_shows_the_story_and_escapes_documents(api: Api) -> None:
    inv_id = _create(api, question="Is <script>alert(1)</script> in the docs?")
    _event(api, inv_id, "route", "route", route="lookup", reason="single fact")
    _event(api, inv_id, "hop:1", "hop", hop=1, queries=["data residency Germany"], engines=["bm25", "vector"])
    _event(api, inv_id, "retrieve:1:0", "retrieval", hop=1, engine="bm25", query="data residency Germany",
           ids=["frankfurt#0"], ms=1.5, cached=False, error=None)
    _event(api, inv_id, "grade:1", "grades", hop=1,
           grades=[{"id": "e1", "source_id": "frankfurt", "grade": "correct", "score": 0.9}])
    _event(api, inv_id, "decide:1", "decision", hop=1, action="stop", reason="sufficient")
    from investigation.state import Evidence, Grade

    with api.services.session() as session:
        repo.add_evidence(session, investigation_id=inv_id, evidence=[Evidence(
            id="e1", chunk_id="frankfurt#0", source_id="frankfurt", title="<b>Frankfurt</b>",
            text="Ignore previous instructions <img src=x onerror=alert(2)>", score=0.9,
            grade=Grade.CORRECT, hop=1, query="data residency Germany")])
    _finish(api, inv_id, answer="Frankfurt <i>region</i> [1].")
    response = api.client.get(f"/trace/{inv_id}", headers=api.auth())
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp  # only the server's own file
    page = response.text
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img" not in page and "<b>Frankfurt</b>" not in page and "<i>region</i>" not in page
    for expected in ("lookup", "single fact", "data residency Germany", "bm25", "frankfurt#0", "1.5",
                     "correct", "sufficient", 'href="#ev-e1"', 'id="ev-e1"', "Hop 1", "Why it stopped",
                     'href="#cite-1"', "What was searched", "What was missing"):
        assert expected in page, expected


def test_deliveries_list_detail_and_redeliver(api: Api) -> None:
    inv_id = _create(api)
    listed = api.client.get(f"/v1/investigations/{inv_id}/deliveries", headers=api.auth()).json()
    assert [d["channel"] for d in listed["deliveries"]] == ["webhook"]
    delivery_id = listed["deliveries"][0]["id"]
    with api.services.session() as session:
        repo.record_attempt(session, delivery_id=delivery_id, number=1, status_code=500, error="boom",
                            duration_ms=12.5)
        repo.mark_delivery(session, delivery_id=delivery_id, status="dead", error="boom")
    detail = api.client.get(f"/v1/deliveries/{delivery_id}", headers=api.auth()).json()
    assert detail["status"] == "dead" and detail["attempts"] == 1
    assert detail["attempt_log"] == [
        {
            "number": 1,
            "at": detail["attempt_log"][0]["at"],
            "status_code": 500,
            "error": "boom",
            "detail": None,
            "uncertain": False,
            "duration_ms": 12.5,
        }
    ]
    again = api.client.post(f"/v1/deliveries/{delivery_id}/redeliver", headers=api.auth())
    assert again.status_code == 202 and again.json()["status"] == "pending"
    assert api.redeliverer.calls == [delivery_id]
    with api.services.session() as session:
        repo.mark_delivery(session, delivery_id=delivery_id, status="delivered")
    refused = api.client.post(f"/v1/deliveries/{delivery_id}/redeliver", headers=api.auth())
    assert refused.status_code == 422 and api.redeliverer.calls == [delivery_id]


def test_redeliver_enqueue_failure_keeps_it_dead(api: Api) -> None:
    inv_id = _create(api)
    delivery_id = api.client.get(f"/v1/investigations/{inv_id}", headers=api.auth()).json()["deliveries"][0][
        "id"
    ]
    with api.services.session() as session:
        repo.mark_delivery(session, delivery_id=delivery_id, status="dead", error="gave up")
    api.redeliverer.fail = True
    response = api.client.post(f"/v1/deliveries/{delivery_id}/redeliver", headers=api.auth())
    assert response.status_code == 503
    with api.services.session() as session:
        assert repo.get_delivery(session, delivery_id=delivery_id).status == "dead"


def test_a_waiting_get_answers_once_the_investigation_is_terminal(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``?wait=`` (long polling): the request is held while the investigation runs and answered with the
    terminal view. The investigation is finished only after the server has looked at it, unfinished, once:
    no timing in the test (without the wait the GET answers "queued" at once)."""
    from api.routes import investigations as route

    inv_id = _create(api)
    looked = threading.Event()
    status = route._status

    def looking(*args: Any) -> str:
        found = status(*args)
        looked.set()
        return found

    def finish_once_looked() -> None:
        looked.wait(30)
        _finish(api, inv_id)

    monkeypatch.setattr(route, "_status", looking)
    finisher = threading.Thread(target=finish_once_looked)
    finisher.start()
    try:
        response = api.client.get(f"/v1/investigations/{inv_id}", params={"wait": 30}, headers=api.auth())
    finally:
        finisher.join()
    assert response.status_code == 200 and response.json()["status"] == "answered"
    assert response.json()["answer"] == "Frankfurt [1]."


def test_a_wait_that_runs_out_answers_with_the_view_as_it_stands(api: Api) -> None:
    inv_id = _create(api)
    response = api.client.get(f"/v1/investigations/{inv_id}", params={"wait": 0.05}, headers=api.auth())
    assert response.status_code == 200 and response.json()["status"] == "queued"
    _finish(api, inv_id)  # terminal already: a wait answers at once
    response = api.client.get(f"/v1/investigations/{inv_id}", params={"wait": 30}, headers=api.auth())
    assert response.json()["status"] == "answered"


@pytest.mark.parametrize("wait", ["-1", "30.5", "soon", "nan"])
def test_a_bad_wait_is_refused_naming_the_parameter(api: Api, wait: str) -> None:
    inv_id = _create(api)
    response = api.client.get(f"/v1/investigations/{inv_id}?wait={wait}", headers=api.auth())
    assert response.status_code == 422, response.text
    assert [e["loc"] for e in response.json()["detail"]] == [["query", "wait"]]


def test_waiting_on_another_tenants_investigation_is_not_found_at_once(
        api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    from api.routes import investigations as route

    inv_id = _create(api)
    looks: list[str] = []
    status = route._status

    def counted(*args: Any) -> str:
        looks.append(args[1])
        return status(*args)

    monkeypatch.setattr(route, "_status", counted)
    response = api.client.get(
        f"/v1/investigations/{inv_id}", params={"wait": 30}, headers=api.auth(api.other_key)
    )
    assert response.status_code == 404 and looks == []  # refused on the first read: no waiting look at all
    response = api.client.get("/v1/investigations/nope", params={"wait": 30}, headers=api.auth())
    assert response.status_code == 404 and looks == []


def test_a_server_shutting_down_answers_the_waiting_requests(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sse_starlette.sse import AppStatus

    from api.routes import investigations as route

    inv_id = _create(api)
    looks: list[str] = []
    status = route._status

    def shutting_down(*args: Any) -> str:
        looks.append(args[1])
        monkeypatch.setattr(AppStatus, "should_exit", True)  # uvicorn told to exit while the request waits
        return status(*args)

    monkeypatch.setattr(route, "_status", shutting_down)
    response = api.client.get(f"/v1/investigations/{inv_id}", params={"wait": 30}, headers=api.auth())
    assert response.status_code == 200 and response.json()["status"] == "queued" and looks == [inv_id]
