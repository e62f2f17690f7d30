"""A tool call's result as evidence: a passage the reducer fuses, grades and cites like a document;
and the sentence an answer adds when a tool could not be reached (a gap is admitted, never hidden)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from investigation.state import Answer, Passage
from investigation.tools.declaration import ToolDeclaration
from investigation.tools.projection import evidence_text, leaf_values, summary_sentences
from investigation.tools.templates import render_text

ENGINE_PREFIX = "tool:"
NOTHING_ELSE = "Nothing else I can check answers this question, so I will not guess."


def tool_engine(name: str) -> str:
    """The slot engine name of a tool in a hop (`tool:billing_account`)."""
    return ENGINE_PREFIX + name


def is_tool_engine(engine: str) -> bool:
    return engine.startswith(ENGINE_PREFIX)


def tool_query(engine: str) -> str:
    """The "query" a tool result is filed under (its own group when the evidence is ranked)."""
    return f"{engine.removeprefix(ENGINE_PREFIX).replace('_', ' ')} (tool)"


def args_digest(args: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()[:16]


def citation_title(decl: ToolDeclaration, document: Mapping[str, Any], args: Mapping[str, Any],
                   fetched_at: str) -> str:
    values: dict[str, Any] = {**leaf_values(document), **{k: v for k, v in args.items()}}
    values.update(fetched_at=fetched_at, tool=decl.display_name)
    return render_text(decl.title, values)


def as_passage(decl: ToolDeclaration, document: Mapping[str, Any], args: Mapping[str, Any],
               fetched_at: str, url: str | None = None, *, notice: str = "") -> Passage:
    """The projected payload as a rank-1 passage of engine `tool:<name>` (stable id per arguments);
    `notice` (an agent's mark of records that are not the requester's) opens the text."""
    title = citation_title(decl, document, args, fetched_at)
    digest = args_digest(args)
    text = evidence_text(title, document, summary_sentences(decl.summary, document, args))
    return Passage(
        chunk_id=f"{tool_engine(decl.name)}:{digest}",
        source_id=f"{tool_engine(decl.name)}:{digest}",
        title=title,
        score=1.0,
        text=f"{notice} {text}" if notice else text,
        engine=tool_engine(decl.name),
        rank=1,
        url=url,
    )


def admit_gaps(answer: Answer, gaps: Sequence[str]) -> Answer:
    """The answer with each tool gap (a failed call, an item the requester cannot see) said first, in its
    text and caveat. A refusal is not re-opened with "not in the knowledge base" when the knowledge base
    was not what failed: it names the gap, then says nothing else answers the question."""
    if not gaps:
        return answer
    admitted = " ".join(dict.fromkeys(gaps))
    caveat = f"{answer.caveat}; {admitted}" if answer.caveat else admitted
    if answer.refused:
        text = f"{admitted} {NOTHING_ELSE}"
    else:
        text = f"{admitted}\n\n{answer.text}"
    return answer.model_copy(update={"text": text, "caveat": caveat})
