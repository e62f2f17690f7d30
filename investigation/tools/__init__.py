"""Tenant-declared HTTP tools as retrieval sources: declarations, the role policy, projections, the
hop's tool choice and tool results as evidence. Pure: no HTTP, Redis or SQL here (see adapters/tools)."""

from investigation.tools.declaration import (
           ParamSpec,
           ToolAuth,
           ToolDeclaration,
           ToolPolicy,
           parse_declaration,
)
from investigation.tools.policy import CallScope, check_proposed, refusal, resolve_arguments

__all__ = ["CallScope", "ParamSpec", "ToolAuth", "ToolDeclaration", "ToolPolicy", "check_proposed",
           "parse_declaration", "refusal", "resolve_arguments"]
