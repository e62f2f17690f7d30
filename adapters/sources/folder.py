"""A folder of documents (.md, .txt, .html) as a source: files changed since the last completed sync are read
(by modification time; `--full` reads all), every file is listed so a removed one leaves the engines.

A file's id is its path inside the folder; a front matter block may set its title, url and visibility
(`adapters.search.ingest.front_matter`).
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from adapters.search.ingest import front_matter
from adapters.sources.base import SourceRejected
from adapters.sources.html import html_to_text
from investigation.sources.items import MAX_BODY_CHARS, Item, Page
from investigation.state import Visibility

EXTENSIONS = (".md", ".txt", ".html", ".htm")
FILES_PER_BATCH = 100
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


class FolderReader:
    """The `Reader` of one directory tree."""

    def __init__(self, path: Path, *, source: str) -> None:
        self.path = path
        self.source = source

    def close(self) -> None:
        return None

    def begin(self, cursor: dict[str, Any] | None, *, full: bool) -> dict[str, Any]:
        if not self.path.is_dir():
            raise SourceRejected(f"source {self.source!r}: {self.path} is not a folder (check --path)")
        cursor = dict(cursor or {})
        if cursor.get("phase") and not full:
            return cursor
        return {"since": None if full else cursor.get("since"), "phase": "files", "after": "",
                "run_max": cursor.get("since"), "listing": uuid.uuid4().hex[:16]}

    def _files(self) -> list[tuple[str, Path]]:
        found = []
        for file in self.path.rglob("*"):
            relative = file.relative_to(self.path)
            if (file.is_file() and file.suffix.lower() in EXTENSIONS
                    and not any(part.startswith(".") for part in relative.parts)):
                found.append((relative.as_posix(), file))
        return sorted(found)

    def page(self, cursor: dict[str, Any]) -> Page:
        after, since = str(cursor.get("after") or ""), cursor.get("since")
        run_max = cursor.get("run_max")
        batch = [(rel, f) for rel, f in self._files() if rel > after][:FILES_PER_BATCH]
        items: list[Item] = []
        listed: list[str] = []
        unchanged = 0
        for relative, file in batch:
            try:
                mtime = file.stat().st_mtime
            except FileNotFoundError:
                continue  # removed while listed: the listing will not name it
            listed.append(relative)
            run_max = mtime if run_max is None else max(run_max, mtime)
            if since is not None and mtime <= since:
                unchanged += 1
                continue
            items.append(self._item(relative, file))
        listing = str(cursor.get("listing") or "")
        if len(batch) < FILES_PER_BATCH:
            return Page(tuple(items), {"since": run_max}, more=False, listed=tuple(listed), listing=listing,
                        reconcile=True, unchanged=unchanged)
        after_cursor = {**cursor, "after": batch[-1][0], "run_max": run_max}
        return Page(tuple(items), after_cursor, more=True, listed=tuple(listed), listing=listing,
                    unchanged=unchanged)

    def _item(self, relative: str, file: Path) -> Item:
        with file.open("rb") as handle:
            raw = handle.read(MAX_BODY_CHARS + 1)
        content = raw.decode("utf-8-sig", errors="replace")
        fields, content = front_matter(content)
        title = Path(relative).stem
        if file.suffix.lower() in (".html", ".htm"):
            match = _TITLE.search(content)
            title = html_to_text(match.group(1)) if match else title
            content = html_to_text(content)
        elif file.suffix.lower() == ".md" and (heading := _HEADING.search(content)):
            title = heading.group(1)
        visibility = Visibility.INTERNAL if fields.get("visibility") == "internal" else Visibility.PUBLIC
        return Item(relative, title=str(fields.get("title") or title), text=content,
                    url=fields.get("url"), visibility=visibility)
