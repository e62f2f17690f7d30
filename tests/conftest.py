"""Fixtures shared by the whole suite: real Redis (or an embedded one) and fresh migrated databases.

Rule for missing services (`require_or_skip`): skip locally, fail when ``CI=true``.

    redis_url        session  broker/backend URL for Celery/kombu (``redis://`` or ``redis+socket://``)
    redis_py_url     session  the same server as a redis-py URL (``redis://`` or ``unix://``)
    redis_prefix     function unique key prefix; every key under it is deleted after the test
    module_redis_prefix  module  the same for every test of a module (a worker shared by the module)
    redis_client     function redis-py client (decode_responses=True)
    redis_state      function `RedisState(redis_client, redis_prefix)`
    db_url           function a fresh, migrated database, PostgreSQL or both (`databases_for`)
    module_db_url    module   the same, one per module (and database) for a worker shared by the module
    empty_db_url     function the same, but empty (not migrated)
    db_engine        function `make_engine(db_url)`
    session          function a `Session` on `db_engine` (expire_on_commit=False)
    embeddings_dir   session  an embedding cache shared by every xdist worker, holding the example KB's
    vectors
    rabbitmq_vhost   session  a RabbitMQ vhost of this run's own (`tests/support/rabbitmq.py`), deleted at the
    end
    broker_url       function Celery's broker for a test's stack: None (the Redis URL) unless parametrized
                              indirectly with "rabbitmq" (the run's vhost, emptied before and after the test)
"""

from __future__ import annotations

import fcntl
import os
import queue
import shutil
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest
import redis
from cryptography.fernet import Fernet
from sqlalchemy import Engine, create_engine, make_url, text
from sqlmodel import Session

from storage.db import make_engine, migrate
from storage.redis_state import RedisState, client_from_url, kombu_url
from storage.redis_state import redis_py_url as redis_py_form
from storage.secrets import SecretBox

# Worker pool processes of the suite skip their warm-up (SLEUTH_WORKER_WARM_UP; 1.1 s of CPU each, mostly the
# ONNX model, in a hundred-odd pool processes most of which never embed); tests/integration/workers/
# test_warm_up.py tests the warm-up and its hook. Set before any test builds Settings or starts a subprocess.
os.environ.setdefault("SLEUTH_WORKER_WARM_UP", "false")

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/13"
DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def require_or_skip(reason: str) -> NoReturn:
    """A required service is missing: skip the test locally, fail it when CI=true."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: required services must be available)", pytrace=False)
    pytest.skip(reason)


# -- Redis --------------------------------------------------------------------------------------------


def redis_url_pair(url: str) -> tuple[str, str]:
    """(Celery/kombu URL, redis-py URL) of one server, by the product's converters: kombu wants
    ``redis+socket://``, redis-py ``unix://``."""
    return kombu_url(url), redis_py_form(url)


def _redis_answers(url: str) -> bool:
    try:
        client = client_from_url(url, socket_connect_timeout=1, socket_timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError, ValueError):
        return False


@pytest.fixture(scope="session")
def _redis_urls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    configured = os.environ.get("SLEUTH_TEST_REDIS_URL")
    # "embedded" forces the embedded server: the fresh-machine path, where nothing else runs.
    if configured and configured != "embedded":
        if _redis_answers(configured):
            yield redis_url_pair(configured)
            return
        if in_ci():
            pytest.fail(f"SLEUTH_TEST_REDIS_URL={configured} does not answer (CI=true)", pytrace=False)
    if configured != "embedded" and _redis_answers(DEFAULT_REDIS_URL):
        yield redis_url_pair(DEFAULT_REDIS_URL)
        return
    from workers.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path_factory.mktemp("embedded-redis"))
    server.start()
    try:
        yield redis_url_pair(f"unix://{server.socket}")
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_url(_redis_urls: tuple[str, str]) -> str:
    return _redis_urls[0]


@pytest.fixture(scope="session")
def redis_py_url(_redis_urls: tuple[str, str]) -> str:
    return _redis_urls[1]


def delete_prefix(redis_py_url: str, prefix: str) -> None:
    """Delete every key under `prefix` (what a test or a module wrote)."""
    client = client_from_url(redis_py_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
    finally:
        client.close()


@pytest.fixture
def redis_prefix(redis_py_url: str) -> Iterator[str]:
    prefix = "t" + uuid.uuid4().hex[:10]
    yield prefix
    delete_prefix(redis_py_url, prefix)


@pytest.fixture(scope="module")
def module_redis_prefix(redis_py_url: str) -> Iterator[str]:
    prefix = "m" + uuid.uuid4().hex[:10]
    yield prefix
    delete_prefix(redis_py_url, prefix)


@pytest.fixture
def redis_client(redis_py_url: str) -> Iterator[redis.Redis]:
    client = client_from_url(redis_py_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def redis_state(redis_client: redis.Redis, redis_prefix: str) -> RedisState:
    return RedisState(redis_client, redis_prefix)


# -- databases ----------------------------------------------------------------------------------------


def _admin_engine(url: str) -> Engine:
    return create_engine(url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})


@pytest.fixture(scope="session")
def _postgres_admin_url() -> str:
    url = os.environ.get("SLEUTH_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)
    engine = _admin_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        require_or_skip(
            f"PostgreSQL at {make_url(url).render_as_string(hide_password=True)} unreachable: {exc}"
        )
    finally:
        engine.dispose()
    return url


class _PostgresDatabases:
    """Uniquely named databases next to the admin database, leased to tests and reused: a test's database is
    emptied (TRUNCATE, identities restarted) when it ends and leased to the next test, which sees exactly
    what a fresh copy of the migrated template holds. Creating and dropping a database per test cost
    PostgreSQL a checkpoint each (minutes over the suite); a database that cannot be emptied at once is
    dropped in a background thread instead."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.engine = _admin_engine(admin_url)
        self._free: list[tuple[str, str]] = []
        self._leased: set[str] = set()
        self._lock = threading.Lock()
        self._drops: queue.Queue[str | None] = queue.Queue()
        self._dropper = threading.Thread(target=self._drop_forever, name="pg-dropper", daemon=True)
        self._dropper.start()

    def create(self, *, template: str | None = None) -> tuple[str, str]:
        name = "sleuth_t_" + uuid.uuid4().hex[:12]
        clause = f' TEMPLATE "{template}"' if template else ""
        with self.engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        url = make_url(self.admin_url).set(database=name).render_as_string(hide_password=False)
        return name, url

    def lease(self, *, template: str) -> tuple[str, str]:
        """(name, url) of a migrated database holding no rows: an emptied one, or a new copy of `template`."""
        with self._lock:
            name, url = self._free.pop() if self._free else ("", "")
        if not name:
            name, url = self.create(template=template)
            migrate(url)
        with self._lock:
            self._leased.add(name)
        return name, url

    def give_back(self, name: str, url: str) -> None:
        """Empty a leased database for the next test (or drop it, if a lingering transaction holds a lock)."""
        with self._lock:
            self._leased.discard(name)
        try:
            _empty_database(url)
        except Exception as exc:  # noqa: BLE001 - never reuse what could not be emptied
            warnings.warn(f"test database {name} not reused: {exc}", stacklevel=1)
            self.drop_later(name)
            return
        with self._lock:
            self._free.append((name, url))

    def drop_later(self, name: str) -> None:
        self._drops.put(name)

    def drop(self, name: str) -> None:
        with self.engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def close(self) -> None:
        with self._lock:
            names = [name for name, _ in self._free] + sorted(self._leased)
            self._free.clear()
            self._leased.clear()
        for name in names:
            self.drop_later(name)
        self._drops.put(None)
        self._dropper.join(timeout=120)
        self.engine.dispose()

    def _drop_forever(self) -> None:
        while (name := self._drops.get()) is not None:
            try:
                self.drop(name)
            except Exception as exc:  # noqa: BLE001 - a leftover database must not fail other tests
                warnings.warn(f"could not drop test database {name}: {exc}", stacklevel=1)


def _empty_database(url: str) -> None:
    """Delete every row of every table but Alembic's, and restart identities: a fresh migrated database."""
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL lock_timeout = '5s'"))
            tables = (
                conn.execute(
                    text(
                        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                        "AND tablename <> 'alembic_version' ORDER BY tablename"
                    )
                )
                .scalars()
                .all()
            )
            if tables:
                names = ", ".join(f'"{table}"' for table in tables)
                conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def _postgres(_postgres_admin_url: str) -> Iterator[_PostgresDatabases]:
    databases = _PostgresDatabases(_postgres_admin_url)
    yield databases
    databases.close()


@pytest.fixture(scope="session")
def _postgres_template(_postgres: _PostgresDatabases) -> Iterator[str]:
    """A migrated database that each test's database is copied from (cheaper than migrating each)."""
    name, url = _postgres.create()
    migrate(url)
    yield name
    _postgres.drop(name)


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite-template") / "sleuth.db"
    migrate(f"sqlite:///{path}")  # disposes its engine: the WAL is checkpointed into the file
    return path


@contextmanager
def _migrated_database(request: pytest.FixtureRequest, kind: str, directory: Path) -> Iterator[str]:
    """A migrated database of `kind` holding no rows: a copy of the session's SQLite template, or a leased
    PostgreSQL database (emptied and leased again afterwards)."""
    if kind == "sqlite":
        path = directory / "sleuth.db"
        shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
        url = f"sqlite:///{path}"
        migrate(url)
        yield url
        return
    postgres: _PostgresDatabases = request.getfixturevalue("_postgres")
    name, url = postgres.lease(template=request.getfixturevalue("_postgres_template"))
    try:
        yield url
    finally:
        postgres.give_back(name, url)


# Which databases a test runs on. Storage itself, and what depends on how each database locks, counts or
# re-reads (tests/integration/storage/, modules marked `both_databases`), runs on SQLite and PostgreSQL;
# the rest runs once, on PostgreSQL (production's database: stricter about types than SQLite), and the
# end-to-end stacks of tests/e2e run on SQLite (the embedded default). SLEUTH_TEST_DATABASES=both runs
# every database test on both (before a release, or after a change to queries).
DATABASES = ("sqlite", "postgresql")
DB_FIXTURES = {"db_url": "function", "module_db_url": "module", "empty_db_url": "function"}
BOTH_DATABASES_UNDER = Path(__file__).parent / "integration" / "storage"


def databases_for(path: Path, marked: bool) -> tuple[str, ...]:
    """The databases a test at `path` runs on (`marked`: its module says `both_databases`)."""
    if marked or path.is_relative_to(BOTH_DATABASES_UNDER) \
            or os.environ.get("SLEUTH_TEST_DATABASES", "").strip().lower() == "both":
        return DATABASES
    return ("postgresql",)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize the database fixtures a test uses over `databases_for` it (unless the test names its
    database itself with `@pytest.mark.parametrize(..., indirect=True)`)."""
    named = {name.strip() for mark in metafunc.definition.iter_markers("parametrize")
             for name in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])}
    kinds = databases_for(metafunc.definition.path,
                          metafunc.definition.get_closest_marker("both_databases") is not None)
    for name, scope in DB_FIXTURES.items():
        if name in metafunc.fixturenames and name not in named:
            metafunc.parametrize(name, kinds, indirect=True, scope=scope)  # type: ignore[arg-type]


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with _migrated_database(request, request.param, tmp_path) as url:
        yield url


@pytest.fixture(scope="module")
def module_db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with _migrated_database(request, request.param, tmp_path_factory.mktemp("db")) as url:
        yield url


@pytest.fixture
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    postgres: _PostgresDatabases = request.getfixturevalue("_postgres")
    name, url = postgres.create()
    try:
        yield url
    finally:
        postgres.drop_later(name)


@pytest.fixture
def db_engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def session(db_engine: Engine) -> Iterator[Session]:
    with Session(db_engine, expire_on_commit=False) as s:
        yield s


@pytest.fixture
def secret_box() -> SecretBox:
    """A box with a fresh key, for tests that store secrets with no `Services` at hand."""
    return SecretBox(Fernet.generate_key())


@pytest.fixture
def session_factory(db_engine: Engine) -> Callable[[], Session]:
    """New sessions on the test's database (one per thread in concurrency tests)."""
    return lambda: Session(db_engine, expire_on_commit=False)


# -- embeddings -----------------------------------------------------------------------------------------

EXAMPLE_KB = Path(__file__).resolve().parents[1] / "examples" / "kb"


@pytest.fixture(scope="session")
def embeddings_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`SLEUTH_EMBEDDINGS_DIR` for every stack, CLI run and chaos run of this test run that ingests the
    example KB: the first xdist worker to ask embeds it (one ingest, ~15 s of CPU), the others wait for it
    and then only read vectors. Keys are content hashes (model, max tokens, text), so a stack's results are
    the ones an empty cache gives; only the inference is skipped. Cold embedding stays covered by
    tests/integration/adapters/test_embedder.py and by every stack that ingests other texts."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # shared by this run's workers
    cache = root / "embeddings"
    with open(root / "embeddings.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "embeddings.warm").exists():
            _embed_example_kb(cache, root / "embeddings-warm-home")
            (root / "embeddings.warm").touch()
    return cache


def _embed_example_kb(cache: Path, home: Path) -> None:
    from adapters.search.ingest import ingest, load_documents
    from bootstrap import Services
    from config.settings import Settings

    services = Services(Settings(home=home, embeddings_dir=cache))
    try:
        ingest(load_documents([EXAMPLE_KB]), tenant="warm-up", backends=list(services.backends.values()))
    finally:
        services.engine.dispose()
    shutil.rmtree(home, ignore_errors=True)


# -- RabbitMQ (the second broker) ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def rabbitmq_vhost() -> Iterator[Any]:
    from tests.support.rabbitmq import Vhost, answers, server_url

    if not answers(server_url()):
        require_or_skip(f"RabbitMQ does not answer at {server_url()}")
    if not Vhost.usable():
        require_or_skip("rabbitmqctl is not on PATH (a vhost of the run's own is made with it)")
    vhost = Vhost(server_url())
    vhost.create()
    try:
        yield vhost
    finally:
        vhost.delete()


@pytest.fixture()
def broker_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """`Settings.broker_url` of a test's stack: parametrize with ``indirect=True`` over "redis" (None: the
    Redis URL) and "rabbitmq"."""
    if getattr(request, "param", "redis") == "redis":
        yield None
        return
    vhost = request.getfixturevalue("rabbitmq_vhost")
    vhost.purge()
    try:
        yield vhost.url
    finally:
        vhost.purge()


# -- markers follow directories ----------------------------------------------------------------------

# A test's kind is the directory it lives in (tests/unit, tests/integration, tests/e2e, tests/conformance):
# `-m unit` and `pytest tests/unit` select the same tests, and no file carries its own kind marker.
TESTS = Path(__file__).parent
KINDS = ("unit", "integration", "e2e", "conformance")

# Fixtures that reach a service (Redis, a database server or file, a worker, the ONNX model). A test that
# uses one is not a unit test: tests/unit must run with nothing but Python.
SERVICE_FIXTURES = frozenset(
    {
        "redis_url",
        "redis_py_url",
        "redis_prefix",
        "module_redis_prefix",
        "redis_client",
        "redis_state",
        "db_url",
        "module_db_url",
        "empty_db_url",
        "db_engine",
        "session",
        "services",
        "api",
        "stack",
        "shared_stack",
        "queue",
        "embedder",
        "worker",
        "embeddings_dir",
        "rabbitmq_vhost",
    }
)


def kind_of(path: Path) -> str | None:
    """The kind of the test file at `path`: the first directory under tests/ when it names one."""
    try:
        first = path.relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return None
    return first if first in KINDS else None


def _shares_module_fixtures(item: pytest.Item) -> bool:
    """Does the test use a fixture set up once per module (or class), e.g. a worker the module shares?"""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(fixturedef.scope in ("module", "package", "class")
               for name in info.names_closure for fixturedef in info.name2fixturedefs.get(name, ()))


# Every test on the machine's RabbitMQ runs on one xdist worker, one after another: the broker-restart test
# stops the node's application, which would break any other test on it at that moment.
RABBITMQ_GROUP = "rabbitmq"


def _uses_rabbitmq(item: pytest.Item) -> bool:
    """Does the test use the RabbitMQ vhost fixture or `broker_url` parametrized with "rabbitmq"? (A test
    whose subprocess reaches the node carries `@pytest.mark.xdist_group("rabbitmq")` itself.)"""
    callspec = getattr(item, "callspec", None)
    return ("rabbitmq_vhost" in getattr(item, "fixturenames", ())
            or (callspec is not None and callspec.params.get("broker_url") == "rabbitmq"))


def _misplaced(item: pytest.Item, kind: str | None) -> str | None:
    """Why the test is in the wrong directory, or None."""
    if kind is None:
        return f"lives outside {', '.join(f'tests/{k}/' for k in KINDS)}"
    other = sorted({m.name for m in item.iter_markers() if m.name in KINDS} - {kind})
    if other:
        return f"is marked {'/'.join(other)} under tests/{kind}/: move it, and drop the marker"
    used = SERVICE_FIXTURES & set(getattr(item, "fixturenames", ()))
    if kind == "unit" and used:
        return f"uses {', '.join(sorted(used))} under tests/unit/: move it to tests/integration/"
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (`--dist loadgroup`)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its directory's kind, refusing a test whose directory says otherwise; send the
    tests of a module that share module-scoped fixtures to one xdist worker (each such fixture set up
    once)."""
    wrong: dict[str, str] = {}
    for item in items:
        kind = kind_of(item.path)
        if (why := _misplaced(item, kind)) is not None:
            wrong.setdefault(item.nodeid.split("::", 1)[0], why)
        elif kind is not None:
            item.add_marker(getattr(pytest.mark, kind))
        if _uses_rabbitmq(item):
            item.add_marker(pytest.mark.xdist_group(RABBITMQ_GROUP))
        elif _shares_module_fixtures(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    if wrong:
        lines = "\n  ".join(f"{path} {why}" for path, why in sorted(wrong.items()))
        raise pytest.UsageError(f"tests in the wrong directory (a directory means its kind):\n  {lines}")
    items.sort(key=_start_order)


# pytest-xdist hands out the tests in the order collected (after groups of several tests): tests that mostly
# wait on the processes they start (killed workers coming back, redrives, stacks) go first, so that at the end
# of a run the short CPU-bound tests fill the two cores instead of a few tests waiting alone.
_WAITING_FIRST = ("e2e", "integration/tasks", "integration/workers", "integration/tools",
                  "integration/sources", "integration", "conformance", "unit")


def _start_order(item: pytest.Item) -> int:
    try:
        where = item.path.relative_to(TESTS).as_posix()
    except ValueError:
        return len(_WAITING_FIRST)
    return next((i for i, prefix in enumerate(_WAITING_FIRST) if where.startswith(prefix + "/")),
                len(_WAITING_FIRST))


_LOST_GROUPS = pytest.StashKey[str]()


# After pytest-xdist wrote the groups into the node ids.
@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_refuse_lost_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker under `--dist loadgroup`: the node ids are xdist's only channel for the groups to
    its scheduler. When they lack them (pytest 9.2 with xdist 3.8) grouping fails silently and every module's
    shared worker is started on each xdist worker: the grouped tests fail instead, saying why (an error raised
    here on a worker reaches the terminal only as an xdist INTERNALERROR without the message)."""
    if not hasattr(config, "workerinput") or not config.getvalue("loadgroup"):
        return
    lost = [
        item
        for item in items
        if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid
    ]
    for item in lost:
        item.stash[_LOST_GROUPS] = (
            f"pytest-xdist ignored the xdist_group of {len(lost)} tests: this pytest and "
            "pytest-xdist cannot --dist loadgroup (see the pytest pin in pyproject.toml)"
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if (lost := item.stash.get(_LOST_GROUPS, None)) is not None:
        pytest.fail(lost, pytrace=False)


@pytest.fixture()
def celery_app(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[Any]:
    """Sleuth's Celery app (`workers.app.create_celery`) on the test's own Redis prefix; no worker runs."""
    from config.settings import Settings
    from workers.app import create_celery

    built = create_celery(Settings(home=tmp_path / "home", redis_url=redis_url, redis_prefix=redis_prefix))
    try:
        yield built
    finally:
        built.backend.result_consumer.stop()
        built.close()
