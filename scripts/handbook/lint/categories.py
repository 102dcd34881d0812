"""The category vocabulary in tags/categories.yml: per module section, the categories its api pages fall into.

One source for lint (HB011), the grouped navigation and module index pages (site.py), and the home page.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from handbook import ROOT
from handbook.lint.modules import module_tree, sections_by_title
from handbook.lint.tags import check_entries

CATEGORIES_FILE = ROOT / "tags" / "categories.yml"
FIELDS = ("id", "en", "zh")


class CategoryError(ValueError):
    pass


@lru_cache(maxsize=4)
def load(path: Path = CATEGORIES_FILE) -> dict[str, tuple[dict, ...]]:
    """Module section title -> its categories, in display order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise CategoryError(f"{path}: expected a mapping of module section to categories")
    known = set(sections_by_title(module_tree()))
    out: dict[str, tuple[dict, ...]] = {}
    for module, entries in data.items():
        if module not in known:
            raise CategoryError(f"{path}: {module!r} is not a module section (known: {', '.join(sorted(known))})")
        check_entries(entries or [], FIELDS, f"{path}: {module}", "category", CategoryError)
        out[module] = tuple(entries or ())
    return out


def of_module(module: str, path: Path = CATEGORIES_FILE) -> tuple[dict, ...]:
    return load(path).get(module, ())


def ids(module: str, path: Path = CATEGORIES_FILE) -> list[str]:
    return [entry["id"] for entry in of_module(module, path)]
