"""The glossary (i18n/glossary.yml): one Chinese rendering per English term, and the renderings to avoid."""

from __future__ import annotations

import re
from functools import lru_cache

import yaml

from handbook import ROOT

GLOSSARY = ROOT / "i18n" / "glossary.yml"


class GlossaryError(ValueError):
    pass


@lru_cache(maxsize=1)
def load() -> tuple[dict, ...]:
    data = yaml.safe_load(GLOSSARY.read_text(encoding="utf-8")) if GLOSSARY.exists() else []
    for i, entry in enumerate(data or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("en"), str) or not isinstance(entry.get("zh"), str):
            raise GlossaryError(f"{GLOSSARY}: entry {i + 1} needs an `en` and a `zh` string")
        if not all(isinstance(a, str) for a in entry.get("avoid", [])):
            raise GlossaryError(f"{GLOSSARY}: entry {i + 1}: `avoid` is a list of strings")
    return tuple(data or [])


def misused(english: str, translation: str) -> list[tuple[str, str, str]]:
    """(term, the handbook's rendering, the avoided one found) for each glossary term of the English paragraph
    that its translation renders another way."""
    found = []
    for entry in load():
        # the term and its plural or verb forms: concatenate, concatenates, concatenated, concatenating
        stem = re.escape(entry["en"][:-1] if entry["en"].endswith("e") else entry["en"])
        if re.search(rf"(?<![\w-]){stem}(?:e|es|s|d|ed|ing)?(?![\w-])", english, re.I):
            for variant in entry.get("avoid", []):
                if variant in translation:
                    found.append((entry["en"], entry["zh"], variant))
    return found
