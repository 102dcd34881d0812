"""The category vocabulary in tags/categories.yml: per module section, the categories its api pages fall into.

One source for lint (HB011), the grouped navigation and module index pages (site.py), and the home page.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from . import ROOT

CATEGORIES_FILE = ROOT / "tags" / "categories.yml"
FIELDS = ("id", "en", "zh")


class CategoryError(ValueError):
    pass


@lru_cache(maxsize=4)
def load(path: Path = CATEGORIES_FILE) -> dict[str, tuple[dict, ...]]:
    """Module section title -> its categories, in display order."""
    from .site import module_tree, sections_by_title

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise CategoryError(f"{path}: expected a mapping of module section to categories")
    known = set(sections_by_title(module_tree()))
    out: dict[str, tuple[dict, ...]] = {}
    for module, entries in data.items():
        if module not in known:
            raise CategoryError(f"{path}: {module!r} is not a module section (known: {', '.join(sorted(known))})")
        seen: set[str] = set()
        for n, entry in enumerate(entries or [], 1):
            if not isinstance(entry, dict) or sorted(entry) != sorted(FIELDS):
                raise CategoryError(f"{path}: {module} entry {n} must have exactly the fields {', '.join(FIELDS)}")
            if any(not isinstance(entry[f], str) or not entry[f].strip() for f in FIELDS):
                raise CategoryError(f"{path}: {module} entry {n} ({entry.get('id')}) has an empty field")
            if entry["id"] in seen:
                raise CategoryError(f"{path}: {module} lists category {entry['id']!r} twice")
            seen.add(entry["id"])
        out[module] = tuple(entries or ())
    return out


def of_module(module: str, path: Path = CATEGORIES_FILE) -> tuple[dict, ...]:
    return load(path).get(module, ())


def ids(module: str, path: Path = CATEGORIES_FILE) -> list[str]:
    return [entry["id"] for entry in of_module(module, path)]
