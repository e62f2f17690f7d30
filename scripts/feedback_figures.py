"""Figures of ratings, the quality page and knowledge gaps. Benchmark commands, not tests (docs/feedback.md).

    .venv/bin/python scripts/feedback_figures.py quality-pg [--n 100000] [--url postgresql+psycopg://...]
    .venv/bin/python scripts/feedback_figures.py cluster [--n 10000]
    .venv/bin/python scripts/feedback_figures.py link [--runs 20]
    .venv/bin/python scripts/feedback_figures.py tag [--runs 10]

- `quality-pg`: a database of its own (created, then dropped) on the PostgreSQL server, migrated, holding N
  investigations of one tenant over 90 days (a third rated, a fifth with a draft outcome, tool-call events and
  deliveries) plus another tenant's; then the quality report for 30 and 90 days (median of 5) and the signed-in
  `GET /quality` through the API app, and EXPLAIN ANALYZE of every query the report runs.
- `cluster`: N distinct support questions embedded by the MiniLM embedder (cached on disk under --cache, so a
  second run times the grouping alone), then grouped as `sleuth gaps` does.
- `link`, `tag`: through a real `sleuth up` (scripts/feedback_live.py).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROUTES = ("lookup", "lookup", "lookup", "multi_part", "multi_hop", "direct")


def _rows(tenant_id: str, n: int, rng: random.Random, now: Any, days: int) -> dict[str, list[dict[str, Any]]]:
    from storage.feedback_models import Feedback, Outcome
    from storage.models import Delivery, Investigation, TraceEvent

    out: dict[str, list[dict[str, Any]]] = {"investigation": [], "feedback": [], "outcome": [], "trace_event": [],
                                            "delivery": []}
    for i in range(n):
        created = now - timedelta(seconds=rng.uniform(0, days * 86400))
        status = rng.choices(["answered", "refused", "failed"], [0.8, 0.15, 0.05])[0]
        route = "out_of_corpus" if status == "refused" else rng.choice(ROUTES)
        inv = Investigation(id=uuid.uuid4().hex, tenant_id=tenant_id, question=f"Question {i} about plan {i % 97}?",
                            status=status, route=route, audience=rng.choice(["agent", "agent", "customer"]),
                            answer="An answer [1]." if status == "answered" else None,
                            created_at=created, updated_at=created, deadline_at=created + timedelta(minutes=5),
                            finished_at=created + timedelta(seconds=rng.uniform(1, 30)))
        out["investigation"].append(inv.model_dump())
        if status != "failed" and rng.random() < 0.35:
            out["feedback"].append(Feedback(tenant_id=tenant_id, investigation_id=inv.id, rater=f"agent:{i % 50}",
                                            rating=rng.choices(["helpful", "partly", "wrong"], [0.7, 0.2, 0.1])[0],
                                            source="link", created_at=created + timedelta(hours=2)).model_dump())
        if status == "answered" and rng.random() < 0.25:
            draft = rng.choice(["unchanged", "edited", "unused"])
            out["outcome"].append(Outcome(tenant_id=tenant_id, investigation_id=inv.id, helpdesk="zendesk",
                                          ticket_id=str(i), draft=draft, reopened=rng.random() < 0.05,
                                          edit_ratio=0.3 if draft == "edited" else None,
                                          updated_at=created).model_dump(exclude={"id"}))
        for step in range(rng.choice([0, 0, 1, 2])):
            out["trace_event"].append(TraceEvent(investigation_id=inv.id, step_key=f"tool:{step}", kind="tool_call",
                                                 data={"error": "timeout"} if rng.random() < 0.1 else {},
                                                 at=created).model_dump(exclude={"id"}))
        for step in range(3):  # the loop's own events, which the tool count must not read
            out["trace_event"].append(TraceEvent(investigation_id=inv.id, step_key=f"s{step}", kind="hop",
                                                 at=created).model_dump(exclude={"id"}))
        out["delivery"].append(Delivery(investigation_id=inv.id, tenant_id=tenant_id, channel="zendesk",
                                        slot="zendesk", status=rng.choices(["delivered", "dead"], [0.98, 0.02])[0],
                                        created_at=created).model_dump())
    return out


def _insert(engine: Any, rows: dict[str, list[dict[str, Any]]]) -> None:
    from sqlmodel import SQLModel

    tables = SQLModel.metadata.tables
    with engine.begin() as conn:
        for name in ("investigation", "feedback", "outcome", "trace_event", "delivery"):
            for start in range(0, len(rows[name]), 5000):
                conn.execute(tables[name].insert(), rows[name][start:start + 5000])


def quality_pg(args: argparse.Namespace) -> None:
    from fastapi.testclient import TestClient
    from sqlalchemy import event, text

    from api.app import create_app
    from bootstrap import Services
    from config.settings import Settings
    from storage import repositories as repo
    from storage.db import make_engine, migrate
    from storage.models import utcnow

    admin = make_engine(args.url, isolation_level="AUTOCOMMIT")
    name = args.database or f"sleuth_quality_fig_{uuid.uuid4().hex[:8]}"
    url = args.url.rsplit("/", 1)[0] + "/" + name
    try:
        services = Services(Settings(home=Path(f"/tmp/{name}"), database_url=url, redis_url=args.redis,
                                     redis_prefix=name))
        if args.database is None:
            with admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            migrate(url)
            with services.session() as session:
                tenant, key = repo.create_tenant(session, name="acme", box=services.secret_box())
                other, _ = repo.create_tenant(session, name="other", box=services.secret_box())
            rng = random.Random(46)
            t0 = time.perf_counter()
            _insert(services.engine, _rows(tenant.id, args.n, rng, utcnow(), args.history))
            _insert(services.engine, _rows(other.id, args.n // 10, rng, utcnow(), args.history))
            # What autovacuum does after a bulk load: statistics, and the visibility map index-only scans read.
            with services.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("VACUUM ANALYZE"))
            print(f"loaded in {time.perf_counter() - t0:.1f} s")
        with services.session() as session:
            tenant = repo.get_tenant_by_name(session, name="acme")
            _, key = repo.rotate_api_key(session, tenant_id=tenant.id)  # sign in as the page's visitor
        now = utcnow()
        with services.engine.begin() as conn:
            counts = {t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one()
                      for t in ("investigation", "feedback", "outcome", "trace_event", "delivery")}
        print(f"database {name}: rows {counts}; tenant acme: {args.n} investigations over {args.history} days")

        periods = (30, 90, 366)
        for days in periods:
            times = []
            for _ in range(5):
                start = time.perf_counter()
                with services.session() as session:
                    report = repo.quality_report(session, tenant_id=tenant.id, since=now - timedelta(days=days),
                                                 until=now + timedelta(seconds=1))
                times.append(time.perf_counter() - start)
            print(f"quality_report {days} days: {report.total.investigations} investigations, median "
                  f"{statistics.median(times) * 1000:.0f} ms (runs: {', '.join(f'{t * 1000:.0f}' for t in times)})")

        app = create_app(services=services, launcher=lambda _id: None, redeliverer=lambda _id: None)
        with TestClient(app) as client:
            import re

            form = client.get("/login")
            csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
            assert csrf
            client.post("/login", data={"key": key, "next": "/quality", "csrf": csrf.group(1)})
            for days in periods:
                times = []
                for _ in range(5):
                    start = time.perf_counter()
                    page = client.get(f"/quality?days={days}")
                    times.append(time.perf_counter() - start)
                    assert page.status_code == 200 and "<svg" in page.text, page.status_code
                print(f"GET /quality?days={days}: median {statistics.median(times) * 1000:.0f} ms "
                      f"(runs: {', '.join(f'{t * 1000:.0f}' for t in times)})")

        captured: list[tuple[str, Any]] = []

        def capture(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
            if statement.lstrip().upper().startswith("SELECT"):
                captured.append((statement, params))

        event.listen(services.engine, "before_cursor_execute", capture)
        with services.session() as session:
            repo.quality_report(session, tenant_id=tenant.id, since=now - timedelta(days=args.explain_days),
                                until=now + timedelta(seconds=1))
        event.remove(services.engine, "before_cursor_execute", capture)
        raw = services.engine.raw_connection()
        try:
            cursor = raw.cursor()
            for statement, params in captured:
                cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + statement, params)
                plan = "\n".join("    " + r[0] for r in cursor.fetchall())
                print(f"\n-- {' '.join(statement.split())[:150]}…\n{plan}")
        finally:
            raw.close()
        services.engine.dispose()
    finally:
        if not args.keep and args.database is None:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            print(f"database {name} dropped")
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    q = sub.add_parser("quality-pg")
    q.add_argument("--n", type=int, default=100_000)
    q.add_argument("--url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    q.add_argument("--redis", default="redis://127.0.0.1:6379/12")
    q.add_argument("--history", type=int, default=365, help="days the investigations spread over")
    q.add_argument("--explain-days", type=int, default=30, help="the period whose queries are EXPLAINed")
    q.add_argument("--database", default=None, help="reuse this loaded database (kept)")
    q.add_argument("--keep", action="store_true", help="do not drop the database")
    args = parser.parse_args()
    {"quality-pg": quality_pg}[args.command](args)


if __name__ == "__main__":
    main()
