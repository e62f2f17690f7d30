"""What Sleuth asks an LLM to answer with: one tool per decision, its JSON schema, and the typed output it is
validated into (extra keys are invalid output). Constants, so every call of a step sends the same bytes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from investigation.state import Route

# -- typed outputs (one tool per decision; extra keys are invalid output) ------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RouteOut(_Out):
    route: Route
    reason: str = Field(min_length=1, max_length=400)
    confidence: float = Field(ge=0.0, le=1.0)


class SubQueryOut(_Out):
    text: str = Field(min_length=2, max_length=300)
    purpose: str = Field(default="", max_length=200)
    follows: str = Field(default="", max_length=200)  # next hop: the entity/term copied from a passage


class PlanOut(_Out):
    kind: Literal["as_is", "decomposed", "rewritten"]
    subqueries: list[SubQueryOut] = Field(max_length=5)


class GradeOut(_Out):
    id: str = Field(pattern=r"^P\d{1,3}$")
    grade: Literal["correct", "ambiguous", "incorrect"]
    relevance: float = Field(ge=0.0, le=1.0)


class GradesOut(_Out):
    grades: list[GradeOut] = Field(max_length=100)
    missing_evidence: list[str] = Field(default_factory=list, max_length=10)


class JudgmentOut(_Out):
    sufficient: bool
    answered_subqueries: list[str] = Field(default_factory=list, max_length=10)
    missing_information: list[str] = Field(default_factory=list, max_length=10)
    conflicts: list[str] = Field(default_factory=list, max_length=10)
    confidence: float = Field(ge=0.0, le=1.0)
    absent: list[str] = Field(default_factory=list, max_length=10)


class NextQueriesOut(_Out):
    queries: list[SubQueryOut] = Field(max_length=3)


# -- tool schemas (hand-written: stable bytes, no pydantic titles) -------------------------------------

_STR = {"type": "string"}
_UNIT = {"type": "number", "minimum": 0, "maximum": 1}
_SUBQUERY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text", "purpose"],
    "properties": {
        "text": {"type": "string", "description": "A short search query."},
        "purpose": {"type": "string", "description": "Which part of the question it serves."},
    },
}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "additionalProperties": False, "required": required,
                             "properties": properties}}


ROUTE_TOOL = _tool(
    "record_route", "Record how the question must be investigated.",
    {"route": {"type": "string", "enum": [r.value for r in Route]}, "reason": _STR, "confidence": _UNIT},
    ["route", "reason", "confidence"])
PLAN_TOOL = _tool(
    "record_plan",
    "Record the search queries of the first hop (the original question is always searched too).",
    {
        "kind": {"type": "string", "enum": ["as_is", "decomposed", "rewritten"]},
        "subqueries": {"type": "array", "maxItems": 5, "items": _SUBQUERY},
    },
    ["kind", "subqueries"],
)
GRADE_TOOL = _tool(
    "record_grades", "Record one grade for EVERY passage, judged against the original question.",
    {"grades": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["id", "grade", "relevance"],
        "properties": {"id": {"type": "string", "description": "The passage id, e.g. P3."},
                       "grade": {"type": "string", "enum": ["correct", "ambiguous", "incorrect"]},
                       "relevance": _UNIT}}},
     "missing_evidence": {"type": "array", "maxItems": 10, "items": _STR,
                          "description": "What the question needs that no passage provides."}},
    ["grades", "missing_evidence"])
JUDGE_TOOL = _tool(
    "record_judgment", "Record whether the evidence so far answers the original question.",
    {"sufficient": {"type": "boolean"},
     "answered_subqueries": {"type": "array", "maxItems": 10, "items": _STR},
     "missing_information": {"type": "array", "maxItems": 10, "items": _STR},
     "conflicts": {"type": "array", "maxItems": 10, "items": _STR},
     "confidence": _UNIT,
     "absent": {"type": "array", "maxItems": 10, "items": _STR,
                "description": "Names from the question that no passage mentions at all."}},
    ["sufficient", "answered_subqueries", "missing_information", "conflicts", "confidence", "absent"])
_NEXT_QUERY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text", "purpose", "follows"],
    "properties": {
        **_SUBQUERY["properties"],
        "follows": {
            "type": "string",
            "description": "The entity, term or state, copied "
            "exactly from a passage, that this query follows.",
        },
    },
}
NEXT_QUERIES_TOOL = _tool(
    "record_next_queries", "Record the search queries of the next hop (none when nothing can be named).",
    {"queries": {"type": "array", "maxItems": 3, "items": _NEXT_QUERY}}, ["queries"])
