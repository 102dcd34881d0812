"""The module tree of the navigation, read from tags/modules.yml: which section an API's page belongs to.

Lint checks a page's category against its section; the site builds the navigation and module index pages from
the same tree (site/nav.py fills each section with its pages).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import jsonschema
import yaml

from handbook import ROOT
from handbook.verify.document import Page

MODULES_FILE = ROOT / "tags" / "modules.yml"
SCHEMA = Path(__file__).with_name("modules.schema.json")


class ModuleTreeError(ValueError):
    pass


@dataclass
class Section:
    title: str
    modules: tuple[str, ...]  # API prefixes whose pages belong here
    index: str  # docs-relative path of the section's index page
    intro: str
    children: list[Section] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)


@lru_cache(maxsize=4)
def _read(path: Path) -> tuple:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        jsonschema.validate(data, json.loads(SCHEMA.read_text(encoding="utf-8")))
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "top level"
        raise ModuleTreeError(f"{path}: {where}: {exc.message}") from None
    titles = [s["title"] for s in flatten_data(data)]
    repeated = sorted({t for t in titles if titles.count(t) > 1})
    if repeated:
        raise ModuleTreeError(f"{path}: section titles must be unique: {', '.join(repeated)}")
    return tuple(data)


def flatten_data(entries) -> list[dict]:
    return [s for top in entries for s in (top, *flatten_data(top.get("children", [])))]


def _section(entry: dict) -> Section:
    children = [_section(c) for c in entry.get("children", [])]
    return Section(entry["title"], tuple(entry["modules"]), entry["index"], entry["intro"], children)


def module_tree(path: Path = MODULES_FILE) -> list[Section]:
    """A fresh tree (the site appends pages to its sections)."""
    return [_section(entry) for entry in _read(path)]


def flatten(sections: list[Section]) -> list[Section]:
    return [s for top in sections for s in (top, *flatten(top.children))]


def sections_by_title(sections: list[Section]) -> dict[str, Section]:
    return {s.title: s for s in flatten(sections)}


def place(sections: list[Section], api: str) -> Section | None:
    """The section with the longest module prefix that the API name starts with."""
    best, length = None, -1
    for section in flatten(sections):
        for prefix in section.modules:
            if (api == prefix or api.startswith(prefix + ".")) and len(prefix) > length:
                best, length = section, len(prefix)
    return best
