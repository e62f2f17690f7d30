"""`sleuth tools add|list|remove` as a tenant admin uses them: the example declarations go in, every bad
declaration is one clear error line naming the field, a loopback URL needs the tenant's allowlist, and
secrets are never printed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.cli import run_sleuth

TOOLS = Path(__file__).resolve().parents[2] / "examples" / "tools"


def sleuth(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env["SLEUTH_HOME"] = str(home)
    return run_sleuth(args, env, input=stdin, timeout=120)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("tools-cli") / "home"
    assert sleuth(home, "tenants", "create", "acme").returncode == 0
    return home


def variant(tmp_path: Path, name: str, **changes: object) -> Path:
    raw = yaml.safe_load((TOOLS / "billing_account.yaml").read_text())
    raw.update(changes)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_add_list_remove_the_examples(home: Path, tmp_path: Path) -> None:
    token = tmp_path / "billing.token"
    token.write_text("tok-very-secret\n")
    added = sleuth(home, "tools", "add", str(TOOLS / "billing_account.yaml"), "--tenant", "acme",
                   "--secret-file", str(token))
    assert added.returncode == 0, added.stderr
    assert "added tool billing_account" in added.stdout and "tok-very-secret" not in added.stdout
    assert (
        sleuth(home, "tools", "add", str(TOOLS / "service_status.yaml"), "--tenant", "acme").returncode == 0
    )
    listed = sleuth(home, "tools", "list", "--tenant", "acme", "--json")
    views = json.loads(listed.stdout)
    assert [v["name"] for v in views] == ["billing_account", "service_status"]
    assert views[0]["has_secret"] is True and "tok-very-secret" not in listed.stdout
    removed = sleuth(home, "tools", "remove", "service_status", "--tenant", "acme")
    assert removed.returncode == 0
    assert [
        v["name"] for v in json.loads(sleuth(home, "tools", "list", "--tenant", "acme", "--json").stdout)
    ] == ["billing_account"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"params": {"account_id": {"schema": {"type": "strin"}, "source": "context.account_id"}}},
            "params.account_id.schema: invalid JSON Schema",
        ),
        (
            {"url": "https://api.example.com/v1/accounts/{acount_id}/billing"},
            "url: unknown template variable {acount_id}",
        ),
        (
            {"url": "http://127.0.0.1:8080/v1/accounts/{account_id}/billing"},
            "url: 127.0.0.1 is a loopback address",
        ),
        ({"url": "http://10.0.0.7/v1/accounts/{account_id}/billing"}, "url: 10.0.0.7 is a private address"),
        (
            {
                "params": {
                    "account_id": {
                        "schema": {"type": "string", "pattern": "^acct-[0-9]{1,6}$"},
                        "source": "question",
                    }
                },
                "policy": {"audiences": ["customer"], "subject": "requester"},
            },
            ("owner: parameter account_id comes from the question, so the API may return another customer's "
            "record"),
        ),
    ],
)
def test_bad_declarations_are_one_clear_error(
    home: Path, tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    result = sleuth(home, "tools", "add", str(variant(tmp_path, "bad", **changes)), "--tenant", "acme",
                    "--secret-file", "-", stdin="tok")
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.stderr


def test_the_allowlist_opens_a_loopback_tool(home: Path, tmp_path: Path) -> None:
    local = variant(tmp_path, "local", url="http://127.0.0.1:8080/v1/accounts/{account_id}/billing")
    assert sleuth(home, "tenants", "update", "acme", "--allow-host", "127.0.0.1").returncode == 0
    result = sleuth(home, "tools", "add", str(local), "--tenant", "acme", "--secret-file", "-", stdin="tok")
    assert result.returncode == 0, result.stderr


def test_an_imported_operation_with_a_question_parameter_takes_its_owner_check(
    home: Path, tmp_path: Path
) -> None:
    spec = {"openapi": "3.0.0", "servers": [{"url": "https://shop.example.com"}],
            "paths": {"/v2/orders/{order_id}": {"get": {
                "operationId": "getOrder", "summary": "One order by its number: status, carrier and ETA.",
                "parameters": [{"name": "order_id", "in": "path", "required": True,
                                "schema": {"type": "string", "pattern": "^BC-[0-9]{4,6}$"}}],
                "responses": {"200": {"content": {"application/json": {"schema": {
                    "type": "object", "properties": {"order": {"type": "object"}}}}}}}}}}}
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(spec))
    refused = sleuth(home, "tools", "add", str(path), "--operation", "getOrder", "--tenant", "acme")
    assert refused.returncode == 2 and "owner: parameter order_id comes from the question" in " ".join(
        refused.stderr.split()), refused.stderr
    added = sleuth(home, "tools", "add", str(path), "--operation", "getOrder", "--tenant", "acme",
                   "--owner", "order.customer_id=context.account_id")
    assert added.returncode == 0, added.stderr
    bad = sleuth(
        home, "tools", "add", str(path), "--operation", "getOrder", "--tenant", "acme", "--owner", "x"
    )
    assert bad.returncode == 2 and "--owner" in bad.stderr
