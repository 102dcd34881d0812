"""A page's text in another language: each prose unit replaced by its current translation, everything else as is.

Code, outputs and checks are the English page's lines, untouched: the translated page parses to the very same
examples (same code, same expected outputs, same examples hash), so it shows the English page's verified blocks
and badges, and nothing is verified twice. A unit whose translation is out of date (its English changed) shows
the current English with a note; an untranslated one shows the English; the page says how many of each.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from markdown.extensions.toc import slugify

from handbook.i18n import catalog
from handbook.verify.document import Page

NOTES = {
    "zh": {
        "outdated": "此段译文已过时：英文原文在翻译后有改动，这里先显示当前的英文原文。",
        "page": "本页有 {outdated} 段译文已过时、{untranslated} 段尚未翻译，这些段落显示英文原文。",
    }
}


@dataclass
class Translated:
    text: str
    status: catalog.Status


def translate(page: Page, language: str) -> Translated:
    po = catalog.load(page, language)
    entries = {(e.msgctxt, e.msgid): e for e in (po or []) if not e.obsolete}
    found = catalog.status(page, language)
    outdated = {u.line for u in found.outdated or []}
    lines = page.text.split("\n")
    edits: list[tuple[int, int, list[str]]] = []
    for unit in catalog.units(page):
        e = entries.get((unit.kind, unit.text))
        if e is not None and e.msgstr and "fuzzy" not in e.flags:
            edits.append((unit.line - 1, unit.end_line, _lines(unit, e.msgstr)))
        elif unit.line in outdated and unit.kind == "paragraph":
            note = NOTES[language]["outdated"]
            edits.append((unit.end_line, unit.end_line, ["", f'{unit.indent}<p class="hb-i18n-outdated">{note}</p>']))
    for start, end, new in sorted(edits, key=lambda x: x[0], reverse=True):
        lines[start:end] = new
    text = "\n".join(lines)
    missing = len(found.outdated or []), len(found.untranslated or [])
    if any(missing):
        note = NOTES[language]["page"].format(outdated=missing[0], untranslated=missing[1])
        text = _after_title(text, f'<p class="hb-i18n-page">{note}</p>')
    return Translated(text, found)


def _lines(unit: catalog.Unit, translation: str) -> list[str]:
    if unit.kind == "summary":
        return [f"summary: {json.dumps(translation.strip(), ensure_ascii=False)}"]
    if unit.kind == "heading":  # keep the English anchor, so links into the page still land
        title = translation.strip().replace("\n", " ")
        if "{#" not in title:
            title += f" {{#{anchor(unit.text)}}}"
        return [unit.prefix + title]
    body = translation.strip().split("\n")
    return [unit.prefix + body[0], *(unit.indent + x.strip() for x in body[1:])]


def anchor(heading: str) -> str:
    """The id MkDocs gives an English heading (Python-Markdown's toc slugify, on the text without its markup)."""
    explicit = re.search(r"\{#([\w-]+)\}\s*$", heading)
    if explicit:
        return explicit.group(1)
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading)
    return slugify(text, "-")


def _after_title(text: str, html: str) -> str:
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            lines[i + 1 : i + 1] = ["", html]
            break
    return "\n".join(lines)
