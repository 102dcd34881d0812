"""The tag vocabulary in tags/tags.yml: the one source for lint (HB010) and mkdocs' tags_allowed."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from handbook import ROOT

TAGS_FILE = ROOT / "tags" / "tags.yml"
FIELDS = ("id", "en", "zh", "description")


class VocabularyError(ValueError):
    pass


@lru_cache(maxsize=4)
def load(path: Path = TAGS_FILE) -> tuple[dict, ...]:
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    check_entries(entries, FIELDS, str(path), "tag id", VocabularyError)
    return tuple(entries)


def check_entries(entries, fields: tuple[str, ...], where: str, noun: str, error: type[Exception]) -> None:
    """A vocabulary list (tags, categories): each entry exactly these non-empty string fields, each id once."""
    seen: set[str] = set()
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or sorted(entry) != sorted(fields):
            raise error(f"{where}: entry {n} must have exactly the fields {', '.join(fields)}")
        if any(not isinstance(entry[f], str) or not entry[f].strip() for f in fields):
            raise error(f"{where}: entry {n} ({entry.get('id')}) has an empty field")
        if entry["id"] in seen:
            raise error(f"{where}: {noun} {entry['id']!r} is listed twice")
        seen.add(entry["id"])


def ids(path: Path = TAGS_FILE) -> list[str]:
    return [entry["id"] for entry in load(path)]
