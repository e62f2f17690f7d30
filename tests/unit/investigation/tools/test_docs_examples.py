"""Every YAML and JSON block of docs/tools.md loads, and every declaration in it is valid: a user who
copies an example gets a tool `sleuth tools add` accepts. A fragment (a block of declaration keys without
`name`) is validated inside the page's first complete declaration."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from investigation.tools.declaration import parse_declaration

DOC = Path(__file__).resolve().parents[4] / "docs" / "tools.md"
BLOCK = re.compile(r"```(yaml|json)\n(.*?)```", re.DOTALL)


def blocks() -> list[tuple[str, Any]]:
    found = []
    for lang, body in BLOCK.findall(DOC.read_text(encoding="utf-8")):
        found.append((lang, json.loads(body) if lang == "json" else yaml.safe_load(body)))
    return found


def test_every_block_parses_and_every_declaration_validates() -> None:
    loaded = blocks()
    assert len(loaded) >= 3
    complete = [b for _, b in loaded if isinstance(b, dict) and "name" in b]
    assert complete, "the page shows no complete declaration"
    for raw in complete:
        parse_declaration(raw)
    base = complete[0]
    for _, block in loaded:
        if isinstance(block, dict) and "name" not in block:
            parse_declaration({**base, **block})


def test_the_shop_examples_validate() -> None:
    shop = DOC.parents[1] / "examples" / "tools" / "shop"
    for path in sorted(shop.glob("*.yaml")):
        parse_declaration(yaml.safe_load(path.read_text(encoding="utf-8")))
