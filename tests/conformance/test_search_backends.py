"""One behavioural suite for every search backend (see conftest `backend_spec`): same corpus, same
promises."""

from __future__ import annotations

import itertools
import multiprocessing
from collections.abc import Callable

import pytest

from adapters.search.ingest import SourceDocument, chunk_document, ingest
from investigation.errors import ValidationFailed
from investigation.ports import SearchBackend, TenantErasable
from investigation.state import Chunk, Passage, Visibility
from tests.conformance.conftest import BackendSpec

Tenants = Callable[[str], str]

ACME = [
    SourceDocument(
        id="reset-password",
        title="Resetting your password",
        text="If you forgot your password, open the sign-in page and click 'Forgot password'. We e-mail you "
             "a "
        "reset link that stays valid for 30 minutes. If the e-mail does not arrive, check your spam folder "
        "or ask your workspace admin to send a new reset link.",
        url="https://help.acme.test/reset-password",
    ),
    SourceDocument(
        id="two-factor",
        title="Setting up two-factor authentication",
        text="Turn on two-factor authentication under Profile > Security. Scan the QR code with an "
        "authenticator app and keep the ten backup codes somewhere safe. Lost your phone? Use a backup code "
        "to sign in, then register the new device.",
    ),
    SourceDocument(
        id="invoice-download",
        title="Downloading invoices and receipts",
        text="Invoices are issued on the first day of each month. Account owners can download every invoice "
        "as a PDF from Billing > Invoices, and add a VAT number so that it is printed on future invoices.",
    ),
    SourceDocument(
        id="err-4021",
        title="Mailbox sync fails with ERR_4021",
        text="ERR_4021 means the IMAP server rejected our connection because the app password expired or "
        "was revoked. Generate a new app password at your e-mail provider, paste it under Settings > "
        "Mailboxes, and press Reconnect. Syncing resumes within five minutes.",
    ),
    SourceDocument(
        id="sso-saml",
        title="Configuring single sign-on with SAML",
        text="Enterprise workspaces can require single sign-on. Upload the metadata XML from your identity "
        "provider (Okta, Azure AD, Google Workspace) and copy our ACS URL and entity ID into it.",
    ),
    SourceDocument(
        id="api-rate-limits",
        title="API rate limits",
        text="Each API token may send 600 requests per minute. Above that the API answers HTTP 429 Too Many "
        "Requests with a Retry-After header saying how many seconds to wait before retrying.",
    ),
    SourceDocument(
        id="data-export",
        title="Exporting your data (GDPR)",
        text="Workspace admins can export all tickets, contacts and attachments as CSV or JSON. The export "
        "is prepared in the background and a download link is e-mailed within 48 hours.",
    ),
    SourceDocument(
        id="escalation-runbook",
        title="Escalation runbook: ERR_4021 outbreaks",
        text="Internal only. When more than twenty tickets mention ERR_4021 within one hour, page the "
        "on-call IMAP engineer and post a status page incident before answering customers.",
        acl=("group:support-l2",),
    ),
    SourceDocument(
        id="proxy-sync-de",
        title="Synchronisierung über Proxy — Fehlercode Ω-17",
        text="Wenn die Synchronisierung über einen Proxy mit Fehlercode Ω-17 abbricht, tragen Sie die "
        "Proxy-Adresse unter Einstellungen ein. プロキシ経由の同期エラーの説明。 Café, naïve, résumé.",
    ),
]

GLOBEX = [
    SourceDocument(
        id="reset-password", title="Globex kiosk password reset",
        text="Globex staff reset their passwords at the self-service kiosk in the lobby, badge in hand.",
    ),
    SourceDocument(
        id="payroll-dates", title="Globex payroll calendar",
        text="Globex payroll runs on the 25th of every month; payslips appear in the HR portal.",
    ),
]


def ids(passages: list[Passage]) -> list[str]:
    return [p.source_id for p in passages]


@pytest.fixture()
def loaded(search_backend: SearchBackend, tenant: Tenants) -> tuple[SearchBackend, str, str]:
    acme, globex = tenant("acme"), tenant("globex")
    ingest(ACME, tenant=acme, backends=[search_backend])
    ingest(GLOBEX, tenant=globex, backends=[search_backend])
    return search_backend, acme, globex


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("I forgot my password, how do I get a reset link?", "reset-password"),
        ("where can I download the PDF invoice with our VAT number", "invoice-download"),
        ("ERR_4021 when syncing my mailbox", "err-4021"),
        ("configure SAML single sign-on with Okta", "sso-saml"),
        ("the API returns 429 too many requests", "api-rate-limits"),
        ("lost my phone, cannot pass two-factor", "two-factor"),
    ],
)
def test_search_ranks_the_answering_document_first(
    loaded: tuple[SearchBackend, str, str], query: str, expected: str
) -> None:
    backend, acme, _ = loaded
    hits = backend.search(acme, query, 5)
    assert hits and hits[0].source_id == expected
    assert [p.rank for p in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
    assert {p.engine for p in hits} == {backend.name}
    assert len(backend.search(acme, query, 2)) <= 2


def test_passages_carry_the_chunk_fields(loaded: tuple[SearchBackend, str, str]) -> None:
    backend, acme, _ = loaded
    top = backend.search(acme, "forgot password reset link", 1)[0]
    doc = ACME[0]
    assert (top.chunk_id, top.title, top.text, top.url) == ("reset-password#0", doc.title, doc.text, doc.url)


def test_tenants_never_see_each_other(loaded: tuple[SearchBackend, str, str], tenant: Tenants) -> None:
    backend, acme, globex = loaded
    for query in ["Globex payroll payslips", "password reset kiosk lobby", "ERR_4021 mailbox"]:
        assert all("Globex" not in p.title + p.text for p in backend.search(acme, query, 50))
        globex_hits = backend.search(globex, query, 50)
        assert {p.source_id for p in globex_hits} <= {"reset-password", "payroll-dates"}
        assert all("ERR_4021" not in p.text for p in globex_hits)
    assert backend.count(acme) == len(ACME)
    assert backend.count(globex) == len(GLOBEX)
    assert backend.count(tenant("nobody")) == 0
    assert backend.search(tenant("nobody"), "password", 10) == []


def test_acl_filters_restricted_chunks(loaded: tuple[SearchBackend, str, str]) -> None:
    backend, acme, _ = loaded
    query = "ERR_4021 outbreak: page the on-call engineer"
    everyone = ids(backend.search(acme, query, 20))
    assert "escalation-runbook" in ids(backend.search(acme, query, 20, acl=None))
    assert "escalation-runbook" in ids(backend.search(acme, query, 20, acl=["user:ann", "group:support-l2"]))
    for outsider in (["user:bob"], []):
        hits = ids(backend.search(acme, query, 20, acl=outsider))
        assert "escalation-runbook" not in hits
        assert "err-4021" in hits  # public chunks stay visible to everyone in the tenant
    assert "escalation-runbook" in everyone


def test_visibility_filters_internal_documents_and_a_reingest_takes_effect_at_once(
    search_backend: SearchBackend, tenant: Tenants
) -> None:
    acme = tenant("acme")
    runbook = SourceDocument(
        id="credit-runbook",
        title="Runbook: SLA credit approvals",
        text="Approve SLA credits up to 500 dollars without a manager; escalate larger credits.",
        visibility=Visibility.INTERNAL,
    )
    article = SourceDocument(id="credit-article", title="SLA credits",
                             text="Customers may claim SLA credits within 30 days of the end of the month.")
    ingest([runbook, article], tenant=acme, backends=[search_backend])
    query = "SLA credits approvals manager"
    agent = backend_hits = search_backend.search(acme, query, 10)
    assert {p.source_id: p.visibility for p in backend_hits} == {
        "credit-runbook": Visibility.INTERNAL, "credit-article": Visibility.PUBLIC}
    customer = search_backend.search(acme, query, 10, visibility=[Visibility.PUBLIC])
    assert ids(customer) == ["credit-article"] and ids(agent) != ids(customer)
    assert ids(search_backend.search(acme, query, 10, visibility=[Visibility.INTERNAL])) == ["credit-runbook"]
    # made public: visible to a customer at once
    ingest(
        [runbook.model_copy(update={"visibility": Visibility.PUBLIC})], tenant=acme, backends=[search_backend]
    )
    assert "credit-runbook" in ids(search_backend.search(acme, query, 10, visibility=[Visibility.PUBLIC]))


def test_reingest_is_idempotent(loaded: tuple[SearchBackend, str, str]) -> None:
    backend, acme, _ = loaded
    before = [(p.chunk_id, round(p.score, 4)) for p in backend.search(acme, "password reset", 5)]
    ingest(ACME, tenant=acme, backends=[backend])
    ingest(ACME, tenant=acme, backends=[backend])
    assert backend.count(acme) == len(ACME)
    assert [(p.chunk_id, round(p.score, 4)) for p in backend.search(acme, "password reset", 5)] == before


def test_reingest_of_a_changed_document_replaces_its_chunks(
    search_backend: SearchBackend, tenant: Tenants
) -> None:
    acme = tenant("acme")
    sentence = "The retention policy keeps closed tickets for a configurable number of days. "
    long_doc = SourceDocument(id="retention", title="Ticket retention policy", text=sentence * 60)
    n_long = len(chunk_document(long_doc))
    assert n_long > 2
    ingest([long_doc, *ACME[:2]], tenant=acme, backends=[search_backend])
    assert search_backend.count(acme) == n_long + 2
    short = long_doc.model_copy(update={"text": "Closed tickets are now kept for 90 days."})
    report = ingest([short], tenant=acme, backends=[search_backend])
    assert report.removed == n_long
    assert search_backend.count(acme) == 3
    hits = [
        p for p in search_backend.search(acme, "ticket retention policy", 20) if p.source_id == "retention"
    ]
    assert [(p.chunk_id, p.text) for p in hits] == [("retention#0", short.text)]


def test_delete_removes_a_document_of_one_tenant_only(loaded: tuple[SearchBackend, str, str]) -> None:
    backend, acme, globex = loaded
    assert backend.delete(acme, ["reset-password", "no-such-doc"]) == 1
    assert backend.count(acme) == len(ACME) - 1
    assert "reset-password" not in ids(backend.search(acme, "forgot password reset link", 20))
    assert backend.delete(acme, ["reset-password"]) == 0
    assert backend.delete(acme, []) == 0
    assert backend.count(globex) == len(GLOBEX)  # same document id in another tenant is untouched
    assert "reset-password" in ids(backend.search(globex, "password reset kiosk", 5))


def test_delete_tenant_removes_every_entry_of_one_tenant_only(loaded: tuple[SearchBackend, str, str]) -> None:
    backend, acme, globex = loaded
    assert isinstance(backend, TenantErasable)
    assert backend.delete_tenant(acme) == len(ACME)
    assert backend.count(acme) == 0
    assert backend.search(acme, "forgot password reset link", 20) == []
    assert backend.delete_tenant(acme) == 0  # again: nothing left, no error
    assert backend.count(globex) == len(GLOBEX)
    assert "reset-password" in ids(backend.search(globex, "password reset kiosk", 5))
    ingest(ACME[:1], tenant=acme, backends=[backend])  # the tenant's name is free to be used again
    assert backend.count(acme) == 1


def test_unicode_round_trips_and_is_searchable(loaded: tuple[SearchBackend, str, str]) -> None:
    backend, acme, _ = loaded
    hits = backend.search(acme, "Synchronisierung über Proxy Fehlercode Ω-17", 3)
    assert hits[0].source_id == "proxy-sync-de"
    assert (hits[0].title, hits[0].text) == (ACME[-1].title, ACME[-1].text)
    assert isinstance(backend.search(acme, "プロキシ 同期 🙂", 3), list)


def test_very_long_documents(search_backend: SearchBackend, tenant: Tenants) -> None:
    acme = tenant("acme")
    intro = ("Scheduled maintenance happens every Sunday at 02:00 UTC; the help center stays online but "
             "mailbox sync pauses for up to fifteen minutes.")
    filler = " ".join(
        f"Paragraph {i} describes routine operational details of the platform." for i in range(8)
    )
    doc = SourceDocument(id="ops-handbook", title="Operations handbook", text=intro + "\n\n" +
                         "\n\n".join(filler for _ in range(60)))
    report = ingest([doc, *ACME[:3]], tenant=acme, backends=[search_backend])
    assert report.chunks > 20 and search_backend.count(acme) == report.chunks
    assert search_backend.search(acme, "when is the weekly scheduled maintenance window", 3)[0].source_id == (
        "ops-handbook"
    )
    # A single enormous chunk (no chunking in front of the backend) must still index and come back whole.
    huge = Chunk(chunk_id="blob#0", source_id="blob", title="Raw log dump",
                 text="kernel panic log line " * 20_000 + "needle-xyz")
    assert search_backend.upsert(acme, [huge]) == 1
    top = search_backend.search(acme, "raw log dump kernel panic", 1)[0]
    assert top.chunk_id == "blob#0" and top.text == huge.text


NASTY_QUERIES = [
    "ERR_4021", '"unbalanced quote', "title:password", "(sync OR", "AND", "NOT", "OR OR AND",
    r'+-!(){}[]^"~*?:\/', "password~2 reset^3", "text:* OR 1=1; DROP TABLE chunks; --", "a" * 5000,
    "🙂🙂🙂", "\x00\x01 control", "éàü 日本語 Ω", "[1 TO 5]", "field:IN [a b]", "__public__", "- - -",
]


@pytest.mark.parametrize("query", NASTY_QUERIES)
def test_query_syntax_never_crashes(loaded: tuple[SearchBackend, str, str], query: str) -> None:
    backend, acme, _ = loaded
    hits = backend.search(acme, query, 5)
    assert isinstance(hits, list) and len(hits) <= 5
    assert all(p.source_id not in {"payroll-dates"} for p in hits)


def test_error_codes_with_syntax_characters_still_match(loaded: tuple[SearchBackend, str, str]) -> None:
    backend, acme, _ = loaded
    assert backend.search(acme, 'sync error "ERR_4021" (mailbox)', 3)[0].source_id == "err-4021"


@pytest.mark.parametrize("query", ["", " ", "\n\t  "])
def test_empty_query_is_rejected(loaded: tuple[SearchBackend, str, str], query: str) -> None:
    backend, acme, _ = loaded
    with pytest.raises(ValidationFailed) as caught:
        backend.search(acme, query, 5)
    assert caught.value.field == "query"


def test_upsert_of_nothing_and_ping(search_backend: SearchBackend, tenant: Tenants) -> None:
    assert search_backend.ping() is True
    assert search_backend.upsert(tenant("acme"), []) == 0


def test_a_second_instance_sees_the_first_ones_writes(backend_spec: BackendSpec, tenant: Tenants) -> None:
    acme = tenant("acme")
    writer, reader = backend_spec.make(), backend_spec.make()
    ingest(ACME[:3], tenant=acme, backends=[writer])
    assert reader.count(acme) == 3  # the reader now holds a searcher/store of this version
    ingest([ACME[3]], tenant=acme, backends=[writer])
    assert reader.count(acme) == 4
    assert reader.search(acme, "ERR_4021 mailbox sync", 1)[0].source_id == "err-4021"
    # Same-size rewrite in quick succession: a reader must not keep serving the old text.
    edited = ACME[3].model_copy(update={"text": ACME[3].text.replace("five", "nine")})
    ingest([edited], tenant=acme, backends=[writer])
    assert reader.search(acme, "ERR_4021 mailbox sync", 1)[0].text == edited.text
    writer.delete(acme, ["err-4021"])
    assert reader.count(acme) == 3


def _ingest_in_child(spec: BackendSpec, tenant: str, docs: list[dict[str, object]]) -> None:
    ingest([SourceDocument.model_validate(d) for d in docs], tenant=tenant, backends=[spec.make()])


def test_another_process_writes_are_seen(backend_spec: BackendSpec, tenant: Tenants) -> None:
    acme = tenant("acme")
    reader = backend_spec.make()
    ingest(ACME[:2], tenant=acme, backends=[reader])
    assert reader.count(acme) == 2
    # spawn, not fork: a real separate process that builds its own clients, like a CLI ingest next to workers.
    child = multiprocessing.get_context("spawn").Process(
        target=_ingest_in_child, args=(backend_spec, acme, [d.model_dump() for d in ACME[2:5]])
    )
    child.start()
    child.join(120)
    assert child.exitcode == 0
    assert reader.count(acme) == 5
    assert reader.search(acme, "SAML single sign-on Okta", 1)[0].source_id == "sso-saml"
