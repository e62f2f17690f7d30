"""How long a step waits before it tries again when the database was unreachable."""

from __future__ import annotations

from tasks.celery_tasks import DB_BACKOFF_CAP, DB_RETRIES, db_retry_delay


def test_waits_double_from_half_a_second_to_the_cap() -> None:
    lowest = [db_retry_delay(n, rand=lambda: 0.0) for n in range(6)]
    highest = [db_retry_delay(n, rand=lambda: 1.0) for n in range(6)]
    assert lowest == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert highest == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert db_retry_delay(10_000, rand=lambda: 1.0) == DB_BACKOFF_CAP


def test_the_retries_outlast_an_outage_as_long_as_the_deadline() -> None:
    # Even with the shortest draws, the retries cover more than the default 120 s deadline minus a step.
    assert sum(db_retry_delay(n, rand=lambda: 0.0) for n in range(DB_RETRIES)) > 110
