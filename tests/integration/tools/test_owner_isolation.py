"""Tools never show one customer another's data: two (three) customers of a local shop API behind one
token. Each result is checked against the requester before it becomes evidence, the cache is keyed by who
asks, a cited fetch time is the time of the call, and no URL value can change the path's shape."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from storage.tool_state import ToolState
from tests.integration.tools.conftest import ANA, CLEO, ShopStack, build_shop, tool_events

# What only customer B's order BC-9001 holds, and only customer A's order BC-1042.
B_SECRETS = ("7712FX889", "Espresso machine", "412", "FedEx")
A_SECRETS = ("1Z999AA10123", "Ceramic mug", "Pour-over kettle", "84.5")


def everything(view: dict[str, Any]) -> str:
    """The answer, caveat, citations and the whole trace, as one string."""
    return json.dumps(view, default=str)


def shown(secret: str, view: dict[str, Any]) -> bool:
    """Whether `secret` appears in `view` as a value of its own: not inside an id, a timestamp or a measured
    time ("ms": 412.76 holds no order total of 412), which any digits may turn up in."""
    text = re.sub(r'"ms": [0-9.]+', "", everything(view))
    return re.search(rf"(?<![\w.]){re.escape(secret)}(?:\.0+)?(?![\w.])", text) is not None


def test_a_customer_asking_about_another_customers_order_gets_none_of_it(shop: ShopStack) -> None:
    view = shop.run("What's in order BC-9001?", ANA)
    assert shop.shop.calls() == ["/v2/orders/BC-9001"]  # the call went out; its result never became evidence
    for secret in B_SECRETS:
        assert not shown(secret, view), secret
    refused = tool_events(view, "tool_refused")
    assert [e["tool"] for e in refused] == ["order_lookup"]
    assert "order.customer_id" in refused[0]["reason"] and "account_id" in refused[0]["reason"]
    assert "I can't look up order BC-9001 for your account." in str(view["answer"])
    assert not any(str(c["source_id"]).startswith("tool:") for c in view["citations"])


def test_the_owner_sees_their_own_order(shop: ShopStack) -> None:
    view = shop.run("What is the tracking number of order BC-1042?", ANA)
    call = tool_events(view)[0]
    assert call["tool"] == "order_lookup" and call["error"] is None and "owner" not in call
    assert "1Z999AA10123" in str(call["payload"])
    assert any(str(c["source_id"]).startswith("tool:order_lookup:") for c in view["citations"])


def test_an_agent_sees_another_customers_record_marked(shop: ShopStack) -> None:
    view = shop.run("What's in order BC-9001?", ANA, audience="agent")
    call = tool_events(view)[0]
    assert call["error"] is None and "kept and marked for the agent" in call["owner"]
    assert "Espresso machine" in str(call["payload"])
    cited = [c for c in view["citations"] if str(c["source_id"]).startswith("tool:order_lookup:")]
    assert cited, view["citations"]


def test_no_cached_result_is_served_to_another_requester(shop: ShopStack) -> None:
    first = shop.run("What is the tracking number of order BC-1042?", ANA)
    assert "1Z999AA10123" in str(tool_events(first)[0]["payload"])
    view = shop.run("What is the tracking number of order BC-1042?", CLEO)
    call = [
        e
        for e in view["events"]
        if e.get("tool") == "order_lookup" and e["kind"] in ("tool_call", "tool_refused")
    ]
    assert call and all(e.get("cached") is not True for e in call)
    assert shop.shop.calls() == ["/v2/orders/BC-1042", "/v2/orders/BC-1042"]  # C's own call, then refused
    for secret in A_SECRETS:
        assert not shown(secret, view), secret
    assert "I can't look up order BC-1042 for your account." in str(view["answer"])


def test_the_same_requester_is_served_from_the_cache(shop: ShopStack) -> None:
    shop.run("What is the tracking number of order BC-1042?", ANA)
    view = shop.run("What is the tracking number of order BC-1042?", ANA)
    assert tool_events(view)[0]["cached"] is True
    assert shop.shop.calls() == ["/v2/orders/BC-1042"]


def test_a_list_keeps_only_the_requesters_items(shop: ShopStack) -> None:
    shop.shop.leak_lists()  # the API also returns one order of another customer
    view = shop.run("Where are my orders? When do they arrive?", ANA)
    call = tool_events(view)[0]
    assert call["tool"] == "customer_orders" and call["error"] is None
    ids = [o["id"] for o in call["payload"]["orders"]]
    assert ids == ["BC-1042", "BC-204117", "BC-204533"]
    assert "BC-9001" not in everything(view)
    refused = tool_events(view, "tool_refused")
    assert [e["tool"] for e in refused] == ["customer_orders"] and "1 record" in refused[0]["reason"]


class Clock:
    def __init__(self, at: datetime) -> None:
        self.now = at.timestamp()

    def __call__(self) -> float:
        return self.now


def test_a_cached_result_cites_the_time_of_its_call(shop: ShopStack, monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks import tool_step

    clock = Clock(datetime(2026, 12, 5, 8, 0, tzinfo=UTC))
    monkeypatch.setattr(tool_step, "_state", lambda services: ToolState(
        services.redis, services.settings.redis_prefix, clock=clock))
    first = shop.run("What is the tracking number of order BC-1042?", ANA)
    clock.now += 50 * 60  # fifty minutes later, within the declared cache_ttl of the entry
    view = shop.run("What is the tracking number of order BC-1042?", ANA)
    assert tool_events(view)[0]["cached"] is True
    titles = [str(c["title"]) for c in [*first["citations"], *view["citations"]]
              if str(c["source_id"]).startswith("tool:order_lookup:")]
    assert titles == ["Order BC-1042, fetched 08:00", "Order BC-1042, fetched 08:00"]
    assert tool_events(view)[0]["fetched_at"] == datetime(2026, 12, 5, 8, 0, tzinfo=UTC).timestamp()


def test_a_dot_dot_value_never_reaches_another_path(tmp_path: Any, redis_url: str, redis_prefix: str,
                                                    shop_api: Any) -> None:
    """Issue 48 row 11: a parameter with no `pattern` (the requester's name) set to `..`."""
    card = {"name": "gift_card", "description": "The requester's gift card preview and its balance.",
            "url": shop_api.base + "/v2/cards/{name}/preview",
            "params": {"name": {"schema": {"type": "string"}, "source": "context.requester.name"}},
            "auth": {"type": "bearer"}, "projection": ["card.balance"],
            "policy": {"audiences": ["agent", "customer"], "subject": "requester"}}
    shop_api.reset()
    built = build_shop(tmp_path / "home", redis_url, redis_prefix, shop_api, extra=[card])
    try:
        dots = {"requester": {"email": "ana@example.org", "name": ".."}, "account_id": "cust-a"}
        view = built.run("What is the balance of my gift card?", dots)
        assert not any(p.startswith("/v2/preview") or p == "/v2/cards/../preview" for p in shop_api.calls())
        assert all(p.startswith("/v2/cards/") is False for p in shop_api.calls())
        refused = [e for e in tool_events(view, "tool_refused") if e["tool"] == "gift_card"]
        assert refused and "would change the URL's path" in refused[0]["reason"]
    finally:
        built.stack.services.engine.dispose()


def test_an_injected_field_is_fenced_and_the_rest_of_the_record_kept(shop: ShopStack) -> None:
    view = shop.run("When is order BC-204533 going to arrive?", ANA)
    call = tool_events(view)[0]
    assert call["fenced"] == ["order.status_note"]
    assert call["payload"]["order"]["eta"] == "2026-12-09" and call["payload"]["order"]["status"] == "shipped"
    assert "refunded in full" not in everything(view)


def test_select_picks_the_named_order_of_the_requesters_list(tmp_path: Any, redis_url: str, redis_prefix: str,
                                                               shop_api: Any) -> None:
    """`select:` narrows the requester's own list to the order the question names; an order the list does
    not hold is said plainly, and nothing of anyone else's is fetched for it."""
    import yaml

    from cli.tool_shop import SHOP_EXAMPLE_BASE, SHOP_TOOLS

    mine = yaml.safe_load((SHOP_TOOLS / "customer_orders.yaml").read_text(encoding="utf-8"))
    mine.update(name="my_orders", url=str(mine["url"]).replace(SHOP_EXAMPLE_BASE, shop_api.base),
                select={"field": "orders[].id", "from_question": "BC-[0-9]{4,6}"})
    shop_api.reset()
    built = build_shop(tmp_path / "home", redis_url, redis_prefix, shop_api, extra=[mine])
    try:
        view = built.run("Has my order BC-204117 shipped yet?", ANA)
        call = next(e for e in tool_events(view) if e["tool"] == "my_orders")
        assert [o["id"] for o in call["payload"]["orders"]] == ["BC-204117"]
        planned = {t["name"]: t["reason"] for e in view["events"] if e["kind"] == "hop" for t in e["tools"]}
        assert "orders[].id" in planned["my_orders"], planned  # the choice is traced with why
        view = built.run("What is the total of order BC-307755?", ANA)
        call = next(e for e in tool_events(view) if e["tool"] == "my_orders")
        assert (
            call["not_yours"] == "I can't look up order BC-307755 for your account." and "payload" not in call
        )
        assert "I can't look up order BC-307755 for your account." in str(view["answer"])
        # The other customer's item and total, the total as a number of its own; the trace's timings
        # ("ms": 19.92) are left out, since any number may turn up there.
        seen = re.sub(r'"ms": [0-9.]+', "", everything(view))
        assert "Paper filters" not in seen
        assert re.search(r"(?<![\d.])19\.90?(?!\d)", seen) is None
    finally:
        built.stack.services.engine.dispose()


def test_an_order_that_does_not_exist_reads_like_one_of_another_customer(shop: ShopStack) -> None:
    """No existence oracle: "no such order" and "not your order" give the requester the same sentence."""
    missing = shop.run("What's in order BC-0000?", ANA)
    foreign = shop.run("What's in order BC-9001?", ANA)
    assert "I can't look up order BC-0000 for your account." in str(missing["answer"])
    assert "I can't look up order BC-9001 for your account." in str(foreign["answer"])
    assert "could not reach" not in str(missing["answer"])
    assert [e["kind"] for e in missing["events"] if e.get("tool") == "order_lookup"] == ["tool_refused"]
