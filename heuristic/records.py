"""A tool's record and the documents' rules in one answer: the rule a question about the asker's own case
also asks ("… delayed. Can I get a refund?"), and the asker's own value from their record before an
article's general one. `heuristic.synthesis` adds the sentence these choose to the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from heuristic.chains import Sentence
from heuristic.kinds import answer_kind
from investigation.state import Evidence, Grade

# What the asker may or must do: a rule question ("can I cancel …", "will I be charged …", "do I have to …").
_MAY_I = re.compile(
    r"\b(?:can|could|may|will|would|should|must|do|does)\s+(?:i|we|you|my|our)\b(?!\s+have\s+any\b)",
    re.IGNORECASE,
)


def document_rule(question: str, picked: Sequence[Sentence], candidates: Sequence[Sentence],
                   evidence: Sequence[Evidence], question_stems: set[str]) -> Sentence | None:
    """A tool's record says what is true of the requester's case; the rule the question also asks about
    ("… delayed. Can I get a refund?") is in the documents. When every picked sentence is a tool record's,
    the document sentence holding the most question words none of them covers joins the answer."""
    if not picked or not all(evidence[c.index].source_id.startswith("tool:") for c in picked):
        return None
    record = set().union(*(c.stems for c in picked))
    uncovered = question_stems - record
    # A question asking what the asker may do ("Can I cancel order BC-1042?") grades every rule low: no
    # article names the asker's record. Then the rule may come from any retrieved article.
    rule_asked = _MAY_I.search(question) is not None
    documents = [
        c
        for c in candidates
        if not evidence[c.index].source_id.startswith("tool:")
        and (rule_asked or evidence[c.index].grade is not Grade.INCORRECT)
        and _shared(uncovered, c.stems)
    ]
    if not documents:
        return (_rule_on_record_words(question, question_stems, candidates, evidence)
                if _MAY_I_DO.search(question) else None)
    # Of the rules on what is asked, the best graded first; when none is graded on topic, the one about the
    # record's own state ("once an order has shipped …" for a shipped order) before one about another state.
    on_topic = any(evidence[c.index].grade is not Grade.INCORRECT for c in documents)
    return max(documents, key=lambda c: (len(_shared(uncovered, c.stems)), c.weight,
                                         0 if on_topic else len(_shared(record, c.stems)), c.prior))


_ASKER = re.compile(r"\b(?:i|me|my|mine|we|our|ours|us)\b", re.IGNORECASE)


def own_value(question: str, kind: re.Pattern[str] | None, picked: Sequence[Sentence],
               candidates: Sequence[Sentence], evidence: Sequence[Evidence]) -> Sentence | None:
    """A first-person question asking a value of the asker's own case ("how much will my next renewal
    cost?", "when is my next payment?") is answered from their record, not from an article's general value
    ("Plus costs 45 EUR per month"): the sentence of a tool record (not graded off-topic) that holds the
    asked kind of value, when no picked record sentence holds it. Not for what the asker may do ("can I
    …?"), which a rule answers."""
    if kind is None or _ASKER.search(question) is None or _MAY_I_DO.search(question):
        return None
    def holds(c: Sentence) -> bool:
        return (
            evidence[c.index].source_id.startswith("tool:")
            and evidence[c.index].grade is not Grade.INCORRECT
            and kind.search(c.text) is not None
        )

    if any(holds(c) for c in picked):
        return None
    records = [c for c in candidates if holds(c)]
    return max(records, key=lambda c: (c.weight, c.prior, -c.index, -c.position), default=None)


def _rule_on_record_words(question: str, question_stems: set[str], candidates: Sequence[Sentence],
                          evidence: Sequence[Evidence]) -> Sentence | None:
    """A rule question whose every word the record already says ("When can I check in for booking X?" —
    the record: "… with 2 checked bags"; "Booking X says pending payment. How long do I have to pay?" — the
    record: "… is pending payment"): the words alone cannot tell the rule from the record. The rule is then
    the sentence of an article graded on the question (correct or ambiguous) that holds the most of the
    question's words (not its codes), the better graded first; when a value is asked ("when", "how long"),
    one that states a number ("opens 30 hours before departure") before one that does not."""
    words = {w for w in question_stems if not any(ch.isdigit() for ch in w)}
    documents = [c for c in candidates if not evidence[c.index].source_id.startswith("tool:")
                 and evidence[c.index].grade is not Grade.INCORRECT and _shared(words, c.stems)]
    if not documents:
        return None
    value_asked = answer_kind(question) is not None
    return max(documents, key=lambda c: (c.weight, value_asked and _NUMBER.search(c.text) is not None,
                                         len(_shared(words, c.stems)), c.prior))


_NUMBER = re.compile(r"\d")
# What the asker may or must do, said with a modal or "do I have to" / "am I entitled to" — not the
# auxiliary of a question about the record ("when does my plan renew?", "how many points do I have?").
_MAY_I_DO = re.compile(r"\b(?:can|could|may|will|would|should|must)\s+(?:i|we)\b|"
                       r"\b(?:do|does)\s+(?:i|we)\s+(?:have|need)\s+to\b|"
                       r"\b(?:am\s+i|are\s+we)\s+(?:allowed|entitled|able|eligible)\b", re.IGNORECASE)


def _shared(wanted: set[str], stems: frozenset[str] | set[str]) -> set[str]:
    """The stems of `wanted` a sentence holds, inflections the light stemmer keeps apart included
    ("cancel" ~ "cancell", "ship" ~ "shipp")."""
    return {w for w in wanted if w in stems or (len(w) >= 3 and any(
        s.startswith(w) and len(s) - len(w) == 1 and s[-1] == w[-1] for s in stems))}

