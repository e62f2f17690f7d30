"""A tenant's HTTP tool declaration, validated eagerly: every mistake is a `ValidationFailed` naming
its field (invalid parameter schema, unknown template variable, unextractable parameter, ...).

A declaration never holds its secret: `auth` says how the secret is sent, the secret itself is stored
encrypted next to the declaration and resolved only inside the tool task.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticError

from investigation.errors import ValidationFailed
from investigation.state import Route
from investigation.tools.projection import check_path
from investigation.tools.templates import check_url_template, variables

NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")
CONTEXT_FIELDS = ("requester.email", "requester.name", "account_id", "ticket_id")
_ATTRIBUTE = re.compile(r"attributes\.[A-Za-z0-9_.-]{1,100}")
SCALAR_TYPES = ("string", "integer", "number", "boolean")
SPECIAL_TITLE_VARIABLES = ("fetched_at", "tool")
RETRIEVAL_ROUTES = (Route.LOOKUP.value, Route.MULTI_PART.value, Route.MULTI_HOP.value)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ParamSpec(_Strict):
    """One parameter: its JSON Schema (a scalar) and where its value comes from.

    `source` is ``context.<path>`` (the investigation's context: requester.email, account_id, ticket_id,
    attributes.<name>) or ``question`` (extracted from the question text by the schema's `pattern` or
    `enum`, then validated). Nothing else — never retrieved text."""

    json_schema: dict[str, Any] = Field(alias="schema")
    source: str
    required: bool = True
    description: str = ""

    @property
    def context_path(self) -> str | None:
        return self.source.removeprefix("context.") if self.source.startswith("context.") else None


class ToolAuth(_Strict):
    """How the stored secret is sent: a bearer token, a named header, or basic auth ("user:password")."""

    type: Literal["none", "bearer", "header", "basic"] = "none"
    header: str | None = Field(default=None, pattern=r"^[A-Za-z0-9-]{1,64}$")


class ToolPolicy(_Strict):
    """Who may call the tool and who may see its output, enforced in code before any call."""

    routes: tuple[str, ...] = RETRIEVAL_ROUTES
    audiences: tuple[Literal["agent", "customer"], ...] = ("agent",)
    requires_requester: bool = True
    subject: Literal["requester", "any"] = "requester"
    # Context parameters whose values identify a customer (with a schema `pattern`): a question naming a
    # different value of one of them ("account acme-999") is refused when `subject` is the requester.
    identifiers: tuple[str, ...] = ()


class OwnerCheck(_Strict):
    """Whose record a result is, checked on every result before it becomes evidence: the value at
    `field` (a path into the response; `orders[].customer_id` checks each item of `orders`) must equal
    the requester's `equals` (``context.account_id``, ``context.requester.email``, ...). A record that is
    not the requester's is dropped for a customer audience and kept, marked, for agents.
    `public: true` instead says the records belong to no one (status pages, catalogues)."""

    field: str | None = None
    equals: str | None = None
    public: bool = False

    @property
    def context_path(self) -> str:
        return str(self.equals).removeprefix("context.")

    @property
    def checks(self) -> bool:
        return not self.public and self.field is not None


class ItemSelect(_Strict):
    """Pick items of a list result by an id the question names: `field` is the list item's id
    (`orders[].id`), `from_question` the regular expression that recognises such ids in the question.
    It narrows what the requester's own result shows; it never widens whose data is fetched."""

    field: str
    from_question: str = Field(min_length=1, max_length=300)


class ToolDeclaration(_Strict):
    """What the tool answers, how to call it, what of its answer may become evidence."""

    name: str
    description: str = Field(min_length=10, max_length=1000)
    method: Literal["GET", "POST"] = "GET"
    url: str = Field(max_length=2000)
    params: dict[str, ParamSpec] = Field(default_factory=dict, max_length=20)
    auth: ToolAuth = ToolAuth()
    timeout: float = Field(default=5.0, gt=0, le=60)
    retries: int = Field(default=1, ge=0, le=5)
    cache_ttl: int = Field(default=60, ge=0, le=86_400)
    max_response_bytes: int = Field(default=1_000_000, ge=1_000, le=20_000_000)
    projection: tuple[str, ...] = Field(min_length=1, max_length=100)
    internal_fields: tuple[str, ...] = Field(default=(), max_length=100)
    title: str = Field(default="{tool}", max_length=300)
    # Sentences stating the result in words (each rendered once per list item when it names `a[].b`,
    # and left out when a value it names is absent): what graders and extractive answers read first.
    summary: tuple[str, ...] = Field(default=(), max_length=20)
    gap_message: str | None = Field(default=None, max_length=300)
    # Look the result up in the knowledge base too (one search per engine with its first summary sentence),
    # so the answer can say what the record means ("suspended for non-payment" → the suspension article).
    search_kb: bool = True
    policy: ToolPolicy = ToolPolicy()
    owner: OwnerCheck | None = None
    # Questions this tool answers, in the customers' words: a question like one of them selects the tool.
    examples: tuple[str, ...] = Field(default=(), max_length=20)
    select: ItemSelect | None = None

    def fields_for(self, audience: str) -> tuple[str, ...]:
        """The projection one audience may see: internal fields only for agents."""
        return (*self.projection, *self.internal_fields) if audience == "agent" else self.projection

    @property
    def stored_fields(self) -> tuple[str, ...]:
        """What the executor keeps of a response (and the cache holds): every audience's fields plus the
        owner field, so the owner check runs on every read even when the owner is not shown."""
        owner = (self.owner.field,) if self.owner is not None and self.owner.field else ()
        return (*self.fields_for("agent"), *owner)

    @property
    def question_params(self) -> list[str]:
        return [name for name, spec in self.params.items() if spec.source == "question"]

    @property
    def url_variables(self) -> list[str]:
        return variables(self.url)

    @property
    def display_name(self) -> str:
        return self.name.replace("_", " ")

    def gap_sentence(self, error: str) -> str:
        """How the answer admits that this tool could not be reached."""
        if self.gap_message:
            return self.gap_message
        return f"I could not reach the {self.display_name} system ({error}), so this answer does not " \
               f"include what it would have said."


def _check_param(name: str, spec: ParamSpec) -> None:
    field = f"params.{name}"
    if not NAME.fullmatch(name):
        raise ValidationFailed(field, "parameter names are lower-case letters, digits and '_'")
    try:
        Draft202012Validator.check_schema(spec.json_schema)
    except SchemaError as exc:
        raise ValidationFailed(f"{field}.schema", f"invalid JSON Schema: {exc.message}") from None
    kind = spec.json_schema.get("type")
    if kind not in SCALAR_TYPES:
        raise ValidationFailed(f"{field}.schema", f"type must be one of {', '.join(SCALAR_TYPES)}")
    if spec.source == "question":
        if "pattern" not in spec.json_schema and "enum" not in spec.json_schema:
            raise ValidationFailed(f"{field}.source", "a parameter extracted from the question needs a "
                                                      "`pattern` or an `enum` in its schema")
        if "pattern" in spec.json_schema:
            try:
                re.compile(str(spec.json_schema["pattern"]))
            except re.error as exc:
                raise ValidationFailed(f"{field}.schema", f"pattern does not compile: {exc}") from None
    elif spec.context_path is not None:
        path = spec.context_path
        if path not in CONTEXT_FIELDS and not _ATTRIBUTE.fullmatch(path):
            raise ValidationFailed(f"{field}.source", f"unknown context field {path!r}; one of "
                                   f"{', '.join(CONTEXT_FIELDS)} or attributes.<name>")
    else:
        raise ValidationFailed(f"{field}.source", "must be `question` or `context.<field>` "
                                                  "(parameters never come from retrieved text)")


def _check(decl: ToolDeclaration) -> ToolDeclaration:
    if not NAME.fullmatch(decl.name):
        raise ValidationFailed("name", "1-63 lower-case letters, digits and '_', starting with a letter")
    for name, spec in decl.params.items():
        _check_param(name, spec)
    check_url_template("url", decl.url, set(decl.params))
    for i, path in enumerate(decl.projection):
        check_path(f"projection[{i}]", path)
    for i, path in enumerate(decl.internal_fields):
        check_path(f"internal_fields[{i}]", path)
    leaves = {p.replace("[]", "") for p in (*decl.projection, *decl.internal_fields)}
    for var in variables(decl.title):
        if var not in leaves and var not in decl.params and var not in SPECIAL_TITLE_VARIABLES:
            raise ValidationFailed("title", f"unknown template variable {{{var}}}; use a projected field, "
                                            f"a parameter, {{fetched_at}} or {{tool}}")
    for i, sentence in enumerate(decl.summary):
        for var in variables(sentence):
            if var.replace("[]", "") not in leaves and var not in decl.params:
                raise ValidationFailed(
                    f"summary[{i}]",
                    f"unknown template variable {{{var}}}; use a projected field or a parameter",
                )
    for i, route in enumerate(decl.policy.routes):
        if route not in RETRIEVAL_ROUTES:
            raise ValidationFailed(f"policy.routes[{i}]", f"{route!r} is not a retrieval route; one of "
                                                          f"{', '.join(RETRIEVAL_ROUTES)}")
    for i, name in enumerate(decl.policy.identifiers):
        ident = decl.params.get(name)
        if ident is None or ident.context_path is None or "pattern" not in ident.json_schema:
            raise ValidationFailed(f"policy.identifiers[{i}]", f"{name!r} must be a context parameter "
                                                               "with a schema `pattern`")
    _check_owner(decl)
    _check_select(decl)
    for i, example in enumerate(decl.examples):
        if not 3 <= len(example) <= 300:
            raise ValidationFailed(f"examples[{i}]", "an example question has 3 to 300 characters")
    if decl.auth.type == "header" and not decl.auth.header:
        raise ValidationFailed("auth.header", "auth type `header` needs the header name")
    return decl


def _check_owner(decl: ToolDeclaration) -> None:
    owner = decl.owner
    if owner is None:
        asked = decl.question_params
        if asked:
            raise ValidationFailed(
                "owner",
                f"parameter {', '.join(asked)} comes from the question, so the API "
                "may return another customer's record: declare whose record it is, e.g. "
                "`owner: {field: order.customer_id, equals: context.account_id}` (the "
                "response field holding the owner's id and the requester's context field), "
                "or `owner: {public: true}` with `policy.subject: any` for records that "
                "belong to no one",
            )
        return
    if owner.public:
        if owner.field is not None or owner.equals is not None:
            raise ValidationFailed("owner.public", "a public tool names no `field` or `equals`")
        if decl.policy.subject != "any":
            raise ValidationFailed("owner.public", "records that belong to no one need `policy.subject: any`")
        return
    if owner.field is None or owner.equals is None:
        missing = "owner.field" if owner.field is None else "owner.equals"
        raise ValidationFailed(
            missing,
            "an owner check needs both `field` (the response path of the record's "
            "owner id) and `equals` (the requester's context field)",
        )
    check_path("owner.field", owner.field)
    if owner.field.count("[]") > 1:
        raise ValidationFailed("owner.field", "at most one list (`[]`) in the owner path")
    if owner.field.endswith("[]"):
        raise ValidationFailed("owner.field", "the owner path ends at a field of the record, e.g. "
                                              "orders[].customer_id")
    path = owner.equals.removeprefix("context.")
    if not owner.equals.startswith("context.") or (
        path not in CONTEXT_FIELDS and not _ATTRIBUTE.fullmatch(path)
    ):
        raise ValidationFailed("owner.equals", f"must be context.<field>: one of {', '.join(CONTEXT_FIELDS)} "
                                               "or attributes.<name>")


def _check_select(decl: ToolDeclaration) -> None:
    chosen = decl.select
    if chosen is None:
        return
    check_path("select.field", chosen.field)
    if chosen.field.count("[]") != 1 or chosen.field.endswith("[]"):
        raise ValidationFailed("select.field", "the id field of a list's items, e.g. orders[].id")
    if chosen.field not in decl.stored_fields and chosen.field not in decl.projection:
        raise ValidationFailed("select.field", f"{chosen.field} must be projected (add it to `projection`)")
    try:
        re.compile(chosen.from_question)
    except re.error as exc:
        raise ValidationFailed("select.from_question", f"pattern does not compile: {exc}") from None


def _pydantic_field(exc: PydanticError) -> ValidationFailed:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "declaration"
    return ValidationFailed(field, first["msg"])


def parse_declaration(raw: Mapping[str, Any]) -> ToolDeclaration:
    """A validated declaration from its JSON/YAML form; ValidationFailed names the first bad field."""
    if not isinstance(raw, Mapping):
        raise ValidationFailed("declaration", "must be an object")
    try:
        decl = ToolDeclaration.model_validate(dict(raw))
    except PydanticError as exc:
        raise _pydantic_field(exc) from None
    return _check(decl)


def declaration_json(decl: ToolDeclaration) -> dict[str, Any]:
    """The stored / shown form (by alias, so it parses back to the same declaration)."""
    return decl.model_dump(mode="json", by_alias=True)
