"""Which tools a hop calls: the planner's cheap-first rule for tools.

Documents are always searched; a tool is added to hop 1 only when its description clearly matches the
question (or its answer is already cached, which costs nothing); later hops, which run only when the
evidence is insufficient, accept a weaker match. A tool is called at most once per investigation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from investigation.text import content_stems
from investigation.tools.declaration import ToolDeclaration
from investigation.tools.narrowing import named_in_question
from investigation.tools.policy import extract

FIRST_PERSON = re.compile(r"\b(i|i'm|i've|me|my|mine|we|we're|our|ours|us)\b", re.IGNORECASE)


def _stems(text: str) -> set[str]:
    # The light stemmer gives "invoices" → "invoic" but keeps "invoice": drop a final "e" on both sides.
    return {s[:-1] if len(s) > 3 and s.endswith("e") else s for s in content_stems(text)}


@dataclass(frozen=True)
class SelectionConfig:
    first_hop: float = 0.5  # relevance a tool needs in hop 1
    later_hop: float = 0.3  # relevance a tool needs once the documents fell short
    cached: float = 0.25  # relevance enough when the answer is cached (free)
    first_person_bonus: float = 0.15  # a requester-scoped tool and a question about "my"/"our" things
    named_id: float = 0.8  # the question names a value of a parameter the tool's `pattern` recognises
    own_record: float = 0.5  # "my order", "our workspace": the asker's own record of a kind the tool returns
    reads_like: float = 0.5  # the candidate whose record sentences read clearly closest to the question
    reads_like_floor: float = 0.45  # the least cosine similarity of the question and one summary sentence
    reads_like_margin: float = 0.1  # ahead of every other candidate's closest summary sentence by this much


@dataclass(frozen=True)
class ToolChoice:
    """A tool the hop will call, with the relevance and the rule that chose it (for the trace)."""

    name: str
    relevance: float
    reason: str


def named_ids(question: str, decl: ToolDeclaration) -> list[str]:
    """Question parameters whose declared `pattern` finds a value in the question (an order id, ...)."""
    named = [name for name, spec in decl.params.items()
             if spec.source == "question" and "pattern" in spec.json_schema and extract(spec, question)]
    if decl.select is not None and named_in_question(decl, question):
        named.append(decl.select.field)
    return named


def lacks_question_value(question: str, decl: ToolDeclaration) -> bool:
    """A required question parameter the question gives no value for: the tool cannot be asked at all
    (not a refusal — it is simply not a candidate)."""
    return any(spec.required and spec.source == "question" and not extract(spec, question)
               for spec in decl.params.values())


def _leaves(decl: ToolDeclaration) -> list[str]:
    return [path.rsplit(".", 1)[-1].replace("[]", "").casefold() for path in decl.projection]


def field_words(decl: ToolDeclaration) -> str:
    """The names of the fields a tool returns, as words ("tracking_number" → "tracking number")."""
    return " ".join(leaf.replace("_", " ").replace("-", " ") for leaf in _leaves(decl))


def _summary_words(decl: ToolDeclaration) -> str:
    """The words of the summary sentences around their variables ("it renews on {x}" → "it renews on")."""
    return " ".join(re.sub(r"\{[^}]*\}", " ", sentence) for sentence in decl.summary)


def summary_texts(decl: ToolDeclaration) -> list[str]:
    """Each summary sentence without its variables, as the embedder reads it ("Lounge access: {x}." →
    "Lounge access: ."): what a record of the tool says, in the tenant's words."""
    return [" ".join(re.sub(r"\{[^}]*\}", " ", sentence).split()) for sentence in decl.summary]


def reads_like(summary_similarity: Mapping[str, float], config: SelectionConfig | None = None) -> str | None:
    """The candidate tool whose record sentences read clearly closest to the question: its closest summary
    sentence is at least `reads_like_floor` similar to the question and ahead of every other candidate's by
    `reads_like_margin`. Serves questions in words the declaration does not use ("can I use the lounge with
    my membership?" → a record saying "Lounge access: no."); one tool at most, never on a near tie."""
    config = config or SelectionConfig()
    ranked = sorted(summary_similarity.items(), key=lambda item: (-item[1], item[0]))
    if not ranked or ranked[0][1] < config.reads_like_floor:
        return None
    if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < config.reads_like_margin:
        return None
    return ranked[0][0]


def _described(decl: ToolDeclaration) -> set[str]:
    return _stems(f"{decl.display_name} {decl.description} {field_words(decl)} {_summary_words(decl)}")


# The kind of value a question asks for, by the words any asker uses, and the field names that hold that
# kind in any API: "when will it arrive?" wants a date (`eta`, `due_date`, `renews_on`), "how much do we
# owe?" an amount (`total`, `balance`), "is it still open?" a state (`status`). Not one domain's words.
_ASKS = {
    "date": re.compile(
        r"\b(?:when|what\s+(?:date|day|time)|by\s+when|due|arriv\w*|renew\w*|expir\w*|deadline)\b",
        re.IGNORECASE,
    ),
    "amount": re.compile(
        r"\b(?:how\s+much|cost\w*|price\w*|pay|paid|owe[sd]?|charged?|billed|balance|total)\b", re.IGNORECASE
    ),
    "count": re.compile(r"\b(?:how\s+many|number\s+of|left|remaining)\b", re.IGNORECASE),
    "state": re.compile(
        r"\b(?:status|state|still|yet|anymore|any\s+more|right\s+now|at\s+the\s+moment|currently)\b",
        re.IGNORECASE,
    ),
}
_HOLDS = {
    "date": re.compile(r"date|_at$|_on$|^eta$|^due|until|since|renews?|expir|deadline|time"),
    "amount": re.compile(r"amount|total|price|cost|balance|fee|charge|owed"),
    "count": re.compile(r"count|quantity|^used$|limit|remaining|left$|available"),
    "state": re.compile(r"status|state|^overall$|^read_only$|^paused$|^active$|^open$|enabled"),
}


KIND_WEIGHT = 0.5


# Words every API's records share ("account", "customer", "id"): the kind of record a tool returns is in its
# other names ("orders", "subscription", "workspace_state").
_GENERIC_RECORDS = frozenset(
    [
        "account",
        "accounts",
        "user",
        "users",
        "customer",
        "customers",
        "requester",
        "data",
        "result",
        "results",
        "record",
        "records",
        "item",
        "items",
        "response",
        "id",
        "ids",
        "name",
        "email",
        "info",
        "details",
    ]
)
_CODE = re.compile(r"\b[A-Za-z]*[-_]?\d[\w-]*")
_POSSESSED = re.compile(r"\b(?:my|our)\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.IGNORECASE)


def record_nouns(decl: ToolDeclaration) -> set[str]:
    """The stems of the kinds of record a tool returns: the objects and lists its projection walks through
    and the first word of each field ("orders[].eta" → order; "account.workspace_state" → workspace)."""
    nouns: set[str] = set()
    for path in decl.projection:
        parts = [p.replace("[]", "") for p in path.split(".")]
        leaf = re.split(r"[_-]", parts[-1])
        for word in [*parts[:-1], *(leaf[:1] if len(leaf) > 1 else [])]:
            if word.casefold() not in _GENERIC_RECORDS:
                nouns |= _stems(word)
    return nouns


def owns_record(question: str, decl: ToolDeclaration) -> list[str]:
    """The asker's own records the question names that the tool returns ("my earlier ticket", "our
    workspace"), for a tool about the requester only."""
    if decl.policy.subject != "requester":
        return []
    nouns = record_nouns(decl)
    # "my order BC-1042" names one record by its id: a tool whose `pattern` or `select` recognises the id
    # is the one to ask (`named_ids`), not every tool holding orders.
    return [m.group(0) for m in _POSSESSED.finditer(question)
            if _stems(m.group(1)) & nouns and not _CODE.search(question[m.end():m.end() + 16] + m.group(1))]


# The asker's own past dealings: "have I contacted support about this before?", "what did you tell me last
# time?", "did you already answer this?" — and a tool that keeps such a history says so in its description
# ("previous tickets", "earlier replies", "recent orders", "history"). Words any domain uses.
_ASKS_HISTORY = re.compile(r"\b(?:before(?=\s*(?:[?.!,;]|$))|previous(?:ly)?|earlier|last\s+time|already|"
                           r"in\s+the\s+past|ever|prior)\b", re.IGNORECASE)
_KEEPS_HISTORY = re.compile(
    r"\b(?:previous|earlier|past|history|historical|already|recent|prior)\b", re.IGNORECASE
)


def asks_history(question: str, decl: ToolDeclaration) -> bool:
    """A first-person question about the asker's past dealings, and a requester-scoped tool whose name or
    description says it keeps that history."""
    return (decl.policy.subject == "requester" and FIRST_PERSON.search(question) is not None
            and _ASKS_HISTORY.search(question) is not None
            and _KEEPS_HISTORY.search(f"{decl.display_name} {decl.description}") is not None)


def asked_kinds(question: str) -> list[str]:
    """The kinds of value the question asks for (date, amount, count, state), in a fixed order."""
    return [kind for kind, cue in _ASKS.items() if cue.search(question)]


def held_kinds(question: str, decl: ToolDeclaration) -> list[str]:
    """The asked kinds of value that some field of the tool holds (`eta` for "when …?")."""
    leaves = _leaves(decl)
    return [kind for kind in asked_kinds(question) if any(_HOLDS[kind].search(leaf) for leaf in leaves)]


def _example_match(asked: set[str], decl: ToolDeclaration) -> float:
    """The best overlap (Dice) of the question with one of the declaration's `examples:` questions."""
    best = 0.0
    for example in decl.examples:
        said = _stems(example)
        if asked and said:
            best = max(best, 2 * len(asked & said) / (len(asked) + len(said)))
    return best


def matched(question: str, decl: ToolDeclaration) -> list[str]:
    """The question's words the tool declares (description, field names, examples): why it was chosen."""
    declared = _described(decl).union(*(_stems(e) for e in decl.examples))
    words = (w.casefold() for w in re.findall(r"[\w'-]+", question))
    return list(dict.fromkeys(w for w in words if _stems(w) & declared))


def relevance(question: str, decl: ToolDeclaration, similarity: float | None = None,
              config: SelectionConfig | None = None, *, leads_by_summary: bool = False) -> float:
    """How well what the tool declares matches the question, 0..1: the words of its name, description,
    field names and summary sentences, the kind of value asked for (a date, an amount, a count, a state)
    against the kinds its fields hold, its `examples:` questions, the embedding similarity when one is given
    (of the description or the closest example), a bonus when a requester-scoped tool meets a first-person
    question, a floor when the question names the asker's own record of a kind the tool returns ("my ticket"),
    or about the asker's past dealings and the tool keeps that history ("have I contacted support about this
    before?" → previous tickets), or when its record sentences read clearly closest to the question
    (`leads_by_summary`, see
    `reads_like`), and a higher one when it names an id a declared `pattern` recognises."""
    config = config or SelectionConfig()
    asked = _stems(question)
    # An asked kind of value counts as half a word of the question, matched when a field holds that kind
    # and a word of the question is declared too: it tells tools apart, it never chooses one on its own.
    kinds = asked_kinds(question)
    said = len(asked) + KIND_WEIGHT * len(kinds)
    shared = len(asked & _described(decl))
    held = KIND_WEIGHT * len(held_kinds(question, decl)) if shared else 0.0
    lexical = (shared + held) / said if said else 0.0
    score = max(lexical, _example_match(asked, decl))
    if similarity is not None:
        score = max(score, min(1.0, max(0.0, (similarity - 0.2) / 0.5)))
    if decl.policy.subject == "requester" and FIRST_PERSON.search(question):
        score += config.first_person_bonus
    if owns_record(question, decl) or asks_history(question, decl):
        score = max(score, config.own_record)
    if leads_by_summary:
        score = max(score, config.reads_like)
    if named_ids(question, decl):
        score = max(score, config.named_id)
    return round(min(score, 1.0), 4)


def choose(
    question: str,
    hop: int,
    candidates: Sequence[ToolDeclaration],
    *,
    called: set[str],
    cached: set[str] | None = None,
    similarity: Mapping[str, float] | None = None,
    config: SelectionConfig | None = None,
    limit: int = 3,
    leader: str | None = None,
) -> list[ToolChoice]:
    """The tools to call in `hop`, best first, at most `limit` (candidates are already policy-allowed);
    `leader`: the tool whose record sentences read clearly closest to the question (`reads_like`)."""
    config = config or SelectionConfig()
    cached = cached or set()
    picked: list[ToolChoice] = []
    for decl in candidates:
        if decl.name in called:
            continue
        score = relevance(question, decl, (similarity or {}).get(decl.name), config,
                          leads_by_summary=decl.name == leader)
        named = named_ids(question, decl)
        held = held_kinds(question, decl)
        words = (
            ", ".join([*matched(question, decl), *(f"asks a {kind} it returns" for kind in held)])
            or "by meaning"
        )
        if named and score >= config.named_id:
            picked.append(ToolChoice(decl.name, score, f"the question names a {', '.join(named)} its pattern "
                                                       "recognises"))
        elif decl.name in cached and score >= config.cached:
            picked.append(ToolChoice(decl.name, score, "cached answer, relevant to the question"))
        elif hop <= 1 and score >= config.first_hop:
            owned = owns_record(question, decl)
            unaided = relevance(question, decl, (similarity or {}).get(decl.name), config)
            why = (
                f"the question names the asker's own record of a kind the tool returns ({'; '.join(owned)})"
                if owned and score <= config.own_record
                else "the question asks about the asker's past dealings, which the tool keeps"
                if asks_history(question, decl) and score <= config.own_record
                else "its record sentences read closest to the question"
                if unaided < config.first_hop
                else f"declared words match the question ({words})"
            )
            picked.append(ToolChoice(decl.name, score, why))
        elif hop > 1 and score >= config.later_hop:
            picked.append(
                ToolChoice(decl.name, score, f"documents fell short; declared words match ({words})")
            )
    picked.sort(key=lambda c: (-c.relevance, c.name))
    return picked[:limit]
