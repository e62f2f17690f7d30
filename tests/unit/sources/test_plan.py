"""What a batch writes and removes: versions, content hashes, gone items, skipped malformed ones,
reconcile."""

from __future__ import annotations

from investigation.sources.items import MAX_BODY_CHARS, Item, content_hash
from investigation.sources.plan import Known, latest_only, plan_batch, plan_reconcile, version_of
from investigation.sources.visibility import freshdesk_folder, zendesk_article
from investigation.state import Visibility


def test_new_changed_unchanged_and_gone_items() -> None:
    same = Item("2", title="Same", text="unchanged body")
    known = {"2": Known(3, content_hash(same)), "3": Known(1, "old"), "4": Known(2, "x")}
    plan = plan_batch(
        "src",
        [
            Item("1", title="New", text="fresh"),
            same,
            Item("3", title="Changed", text="new body"),
            Item("4", live=False),
            Item("5", live=False),
        ],
        known,
    )
    assert [(w.item.external_id, w.version) for w in plan.writes] == [("1", 1), ("3", 2)]
    assert plan.retire == ["src:3@v1", "src:4@v2"]  # the old version of 3 (after 3@v2 is in), and gone 4
    assert plan.forget == ["4"]
    assert (plan.added, plan.updated, plan.unchanged, plan.deleted, plan.skipped) == (1, 1, 1, 1, 0)


def test_visibility_change_is_a_new_version() -> None:
    public = Item("7", title="T", text="body")
    plan = plan_batch("s", [Item("7", title="T", text="body", visibility=Visibility.INTERNAL)],
                      {"7": Known(1, content_hash(public))})
    assert plan.updated == 1 and plan.writes[0].item.visibility is Visibility.INTERNAL


def test_malformed_items_are_skipped_and_counted() -> None:
    items = [Item("a", title="no body", text="  "), Item("b", text="x" * (MAX_BODY_CHARS + 1)),
             Item("c", text="fine", locale="not a locale!"), Item("d", text="fine", locale="pt-br")]
    plan = plan_batch("s", items, {})
    assert plan.skipped == 3 and [w.item.external_id for w in plan.writes] == ["d"]
    assert plan.problems[0] == "a: no body"


def test_reconcile_keeps_listed_and_failed_ids() -> None:
    known = {"1": Known(1, "h"), "2": Known(4, "h"), "3": Known(1, "h")}
    docs, ids = plan_reconcile("s", known, listed=["1"], failed=["3"])
    assert docs == ["s:2@v4"] and ids == ["2"]


def test_latest_only_keeps_one_version_per_item() -> None:
    ids = ["s:1@v1", "plain-doc", "s:1@v2", "s:2@v5"]
    assert latest_only(ids, lambda x: x) == ["plain-doc", "s:1@v2", "s:2@v5"]
    assert version_of("s:a@b@v12") == ("s:a@b", 12) and version_of("kb-article") is None


def test_visibility_mapping() -> None:
    segments = {10: "staff", 11: "signed_in_users"}
    assert zendesk_article(None, segments) is Visibility.PUBLIC
    assert zendesk_article(10, segments) is Visibility.INTERNAL
    assert zendesk_article(11, segments) is Visibility.INTERNAL
    assert zendesk_article(99, segments) is Visibility.INTERNAL  # unknown segment: restricted
    assert freshdesk_folder(1) is Visibility.PUBLIC
    assert [freshdesk_folder(v) for v in (2, 3, 4, 5, 6, 7, None)] == [Visibility.INTERNAL] * 7


def test_fusion_never_returns_two_versions_of_one_article() -> None:
    from investigation.fusion import RankedList, rrf
    from investigation.state import Passage

    def hit(source_id: str, rank: int, engine: str) -> Passage:
        return Passage(chunk_id=f"{source_id}#0", source_id=source_id, title="t", text="x", score=1.0,
                       engine=engine, rank=rank)

    lexical = RankedList("q", [hit("s:1@v1", 1, "bm25"), hit("other", 2, "bm25")])
    vector = RankedList("q", [hit("s:1@v2", 1, "vector"), hit("s:1@v1", 2, "vector")])
    fused = rrf([lexical, vector])
    assert [p.source_id for p in fused.passages] == ["s:1@v2", "other"]


def test_an_id_too_long_for_the_items_table_is_skipped() -> None:
    plan = plan_batch("s", [Item("x" * 201, text="body")], {})
    assert plan.skipped == 1 and not plan.writes
