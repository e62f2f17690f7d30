"""Knowledge source sync figures against the strict local Zendesk Guide fake (tests/support/help_centers.py),
with the sync running as Celery work on a real worker process (an embedded Redis and `sleuth worker` started
here, the `sources` queue among its queues). A benchmark command, not a test.

    .venv/bin/python scripts/sources_bench.py [--articles 1000] [--changes 10] [--questions 20] [--home DIR]

Prints one JSON object: the first sync of N articles (articles/s, embedding-bound), an incremental sync of
`--changes` edited articles (seconds), a `--full` reconcile of N unchanged articles (seconds), and — after
`--questions` articles are unpublished and one sync runs — how many of the questions that cited them before
still cite them (investigations run in this process by the inline executor, the workers' own steps).
Each sync's time is from sending `sleuth.source_sync` to the source's run ending in the database.
Last (`--every 1m`, with `sleuth beat` running): the seconds from an article's change in the helpdesk to an
answer that cites its new version, with nothing but beat's schedule starting the sync (bound: the interval
plus beat's 30 s look-up, plus the sync).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.channels import add_channel
from app.sources import add_source, get_source
from bootstrap import Services
from cli import processes
from cli.commands import celery_for, create_and_launch
from cli.supervisor import stop_group
from config.settings import Settings
from storage import _sources as sources_repo
from storage import repositories as repo
from tasks import inline
from tests.support.help_centers import HelpCenter
from workers import names

WORDS = [
    "amber",
    "basil",
    "cobalt",
    "dune",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "juniper",
    "kelp",
    "lumen",
    "maple",
    "nectar",
    "onyx",
    "pewter",
    "quartz",
    "russet",
    "saffron",
    "tundra",
    "umber",
    "velvet",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
]


def _word(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]}{WORDS[(i // len(WORDS)) % len(WORDS)]}{i}"


def _body(i: int, version: int = 1) -> str:
    return (
        f"<h2>Setting {i}</h2><p>The {_word(i)} setting controls how often the export job number {i} runs. "
        f"Version {version}: set it under Admin, Exports, then choose the {_word(i)} schedule.</p>"
        f"<p>Changing {_word(i)} takes effect after the next deploy; agents can verify it in the audit "
        "log.</p>"
    )


def _sync(services: Services, settings: Settings, source_id: str, *, full: bool = False) -> tuple[float, Any]:
    with services.session() as session:
        before = sources_repo.get_source(session, source_id=source_id).last_finished_at
    started = time.perf_counter()
    celery_for(settings).send_task(names.T_SOURCE_SYNC, args=[source_id, full])
    while True:
        with services.session() as session:
            source = sources_repo.get_source(session, source_id=source_id)
        if source.last_finished_at != before and source.run_id is None:
            return time.perf_counter() - started, source
        time.sleep(0.1)  # polling the database competes with the worker for the two cores


def _cites(services: Services, tenant: Any, question: str, source_prefix: str) -> bool:
    inv_id = create_and_launch(services, tenant.name, question, "agentic", tenant=tenant, in_process=True,
                               launch=lambda i: inline.run(services, i, deliver=False))
    with services.session() as session:
        view = repo.investigation_view(
            session, investigation=repo.get_investigation(session, investigation_id=inv_id)
        )
    return source_prefix in json.dumps(view.get("citations") or [])


def _freshness(services: Services, settings: Settings, tenant: Any, fake: HelpCenter, source_id: str,
               article: int) -> float:
    """Seconds from an article's change to an answer citing its new version, beat alone starting syncs."""
    assert settings.redis_url is not None
    beat = processes.spawn_beat(processes.child_env(settings, settings.redis_url))
    try:
        fake.zd_put(article, body=_body(article).replace(_word(article), "quokkaflux"))
        changed = time.perf_counter()
        with services.session() as session:
            version = next(i.version for i in sources_repo.known_items(session, source_id=source_id,
                                                                       external_ids=[str(article)]))
        while True:
            with services.session() as session:
                now = next(i.version for i in sources_repo.known_items(session, source_id=source_id,
                                                                       external_ids=[str(article)]))
            if now > version and _cites(
                services,
                tenant,
                "How often does the quokkaflux setting run the export job?",
                f"{source_id}:{article}@v{now}",
            ):
                return time.perf_counter() - changed
            time.sleep(0.5)
    finally:
        stop_group(beat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--no-freshness", action="store_true", help="skip the change-to-answer measurement")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="sleuth-sources-bench-"))
    settings = Settings(home=home, redis_url=None)
    fake = HelpCenter()
    try:
        for i in range(1, args.articles + 1):
            fake.zd_put(i, title=f"Export setting {_word(i)}", body=_body(i))
        with processes.queue_stack(settings, workers=1, concurrency=1) as live:
            services = Services(live, one_process=True)
            with services.session() as session:
                tenant, _ = repo.create_tenant(session, name="bench-sources", box=services.secret_box(),
                                              allowed_hosts=["127.0.0.1"])
            add_channel(services, tenant=tenant, data={"name": "zd", "type": "zendesk", "subdomain": "acme",
                                                       "email": "bot@acme.test", "token": "zd-token",
                                                       "base_url": fake.url})
            add_source(
                services,
                tenant=tenant,
                data={"name": "guide", "type": "zendesk-guide", "channel": "zd", "every": "1m"},
            )
            source_id = get_source(services, tenant=tenant, name="guide").id

            first, source = _sync(services, live, source_id)
            out: dict[str, Any] = {
                "articles": args.articles,
                "cpu_count": os.cpu_count(),
                "first_sync_seconds": round(first, 2),
                "first_sync_articles_per_second": round(args.articles / first, 1),
                "first_sync_stats": source.last_stats,
                "first_sync_error": source.last_error,
            }
            for i in range(1, args.changes + 1):
                fake.zd_put(i, body=_body(i, version=2))
            incremental, source = _sync(services, live, source_id)
            out.update(incremental_changes=args.changes, incremental_seconds=round(incremental, 2),
                       incremental_stats=source.last_stats)
            full, source = _sync(services, live, source_id, full=True)
            out.update(full_reconcile_seconds=round(full, 2), full_reconcile_stats=source.last_stats)

            picked = list(range(args.changes + 1, args.changes + 1 + args.questions))
            questions = {i: f"How often does the {_word(i)} setting run the export job?" for i in picked}
            before = [i for i in picked if _cites(services, tenant, questions[i], f"{source_id}:{i}@")]
            for i in picked:
                fake.zd_put(i, draft=True)
            unpublish, source = _sync(services, live, source_id)
            after = [i for i in before if _cites(services, tenant, questions[i], f"{source_id}:{i}@")]
            out.update(unpublished=len(picked), questions_citing_before=len(before),
                       questions_citing_after_one_sync=len(after), unpublish_sync_seconds=round(unpublish, 2),
                       unpublish_stats=source.last_stats)
            if not args.no_freshness:
                out["change_to_answer_seconds"] = round(_freshness(services, live, tenant, fake, source_id,
                                                                   args.articles), 1)
    finally:
        fake.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
