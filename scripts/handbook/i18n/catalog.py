"""Translations tracked paragraph by paragraph against their English source, in gettext PO files.

Each page's prose is cut into units by the page model (verify/document.py `text_blocks`): headings, paragraphs
(list-item paragraphs too, without their marker) and table rows, plus the front matter's `summary`. Code blocks,
outputs and checks are never units: a translated page shows the English page's verified blocks as they are.

`i18n/zh/<page path>.po` holds one entry per unit: msgid the English text, msgstr the Chinese, with the gettext
conventions translators' tools know: an entry whose English changed since it was translated is *fuzzy* and keeps
the English it was translated from as its previous msgid (`#| msgid`); an English paragraph that is gone becomes
obsolete (`#~`). `update()` does that merge (msgmerge's rules, with polib); `status()` counts what is current.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import polib

from handbook import ROOT
from handbook.verify.document import Page

I18N = ROOT / "i18n"
LANGUAGES = ("zh",)
_MARKER = re.compile(r"^(\s*)((?:[-*+]|\d+[.)])\s+)?")
_HEADING = re.compile(r"^(\s*#{1,6})(?:\s+|$)")
# An api page's section titles: translated by the render step (i18n/strings.py), never per page.
FIXED_HEADINGS = ("Official definition", "Parameters", "Examples", "Common pitfalls", "Performance tips")
SIMILAR = 0.6  # a changed paragraph is matched to its old translation above this difflib ratio (msgmerge's idea)


@dataclass(frozen=True)
class Unit:
    kind: str  # heading | paragraph | row | summary
    line: int  # first line (front matter summary: its line)
    end_line: int
    prefix: str  # what stays before the text on the first line: indentation and a list marker
    indent: str  # the continuation lines' indentation
    text: str  # the English, as written (inline Markdown kept), lines joined with "\n"


def units(page: Page) -> list[Unit]:
    lines = page.text.split("\n")
    out: list[Unit] = []
    summary = (page.front or {}).get("summary")
    if isinstance(summary, str) and summary.strip():
        line = page.front_lines.get("summary", 1)
        out.append(Unit("summary", line, line, "", "", summary.strip()))
    for block in page.text_blocks:
        chunk = lines[block.line - 1 : block.end_line]
        first = chunk[0]
        if block.kind == "heading":
            m = _HEADING.match(first)
            if m is None:  # a setext heading: its text lines, then an underline of --- or === that stays as it is
                text = "\n".join(x.strip() for x in chunk[:-1]).strip()
                if text and text not in FIXED_HEADINGS:
                    out.append(Unit(block.kind, block.line, block.end_line - 1, "", "", text))
                continue
            title = first[m.end() :].strip()
            if title in FIXED_HEADINGS or (page.kind == "api" and m.group(1).strip() == "#"):
                continue  # an api page's section titles come from the render step; its H1 is the API's name
            prefix = m.group(0)
        elif block.kind == "paragraph":
            prefix = _MARKER.match(first).group(0)
        else:
            prefix = first[: len(first) - len(first.lstrip())]
        rest = [x.strip() for x in chunk[1:]]
        indent = ""
        if len(chunk) > 1:
            indent = chunk[1][: len(chunk[1]) - len(chunk[1].lstrip())]
        text = "\n".join([first[len(prefix) :].rstrip(), *rest]).strip()
        if text:
            out.append(Unit(block.kind, block.line, block.end_line, prefix, indent, text))
    return out


def po_path(page: Page, language: str) -> Path:
    """i18n/<language>/<page path under docs/>.po, in the nearest folder above the page that has an i18n/ folder
    (the repository's, or a test fixture's own)."""
    path = Path(page.path)
    base = next((a for a in path.parents if (a / I18N.name).is_dir()), ROOT)
    rel = path.relative_to(base) if path.is_relative_to(base) else Path(path.name)
    parts = rel.parts[1:] if rel.parts and rel.parts[0] == "docs" else rel.parts
    return base / I18N.name / language / Path(*parts).with_suffix(".po")


def load(page: Page, language: str) -> polib.POFile | None:
    path = po_path(page, language)
    return polib.pofile(str(path), wrapwidth=0) if path.exists() else None


def _key(unit: Unit) -> tuple[str, str]:
    return unit.kind, unit.text


def update(page: Page, language: str) -> tuple[polib.POFile, dict[str, int]]:
    """Merge the page's current units into its PO file (new entries empty; changed ones fuzzy with their old
    translation and previous English; vanished ones obsolete). Returns the file (not saved) and what changed."""
    old = load(page, language)
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": "pytorch-handbook",
        "Language": language,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "X-Source": page.rel,
    }
    previous = [e for e in (old or []) if e.msgstr]  # translated entries, current or obsolete
    by_key = {(e.msgctxt, e.msgid): e for e in (old or []) if not e.obsolete}
    counts = {"kept": 0, "new": 0, "fuzzy": 0, "obsolete": 0}
    used: set[int] = set()
    for unit in units(page):
        found = by_key.get(_key(unit))
        if found is not None:
            entry = polib.POEntry(msgctxt=unit.kind, msgid=unit.text, msgstr=found.msgstr, flags=list(found.flags))
            entry.previous_msgid = found.previous_msgid
            entry.tcomment = found.tcomment
            used.add(id(found))
            counts["kept"] += 1
        else:
            match = _closest(unit, [e for e in previous if id(e) not in used])
            entry = polib.POEntry(msgctxt=unit.kind, msgid=unit.text, msgstr=match.msgstr if match else "")
            if match is not None:
                entry.flags = ["fuzzy"]
                entry.previous_msgid = match.previous_msgid or match.msgid  # what the translation was made from
                used.add(id(match))
                counts["fuzzy"] += 1
            else:
                counts["new"] += 1
        entry.occurrences = [(page.rel, str(unit.line))]
        po.append(entry)
    for e in previous:
        if id(e) not in used and not e.obsolete:
            gone = polib.POEntry(msgctxt=e.msgctxt, msgid=e.msgid, msgstr=e.msgstr, obsolete=True)
            po.append(gone)
            counts["obsolete"] += 1
    return po, counts


def _closest(unit: Unit, candidates: list[polib.POEntry]) -> polib.POEntry | None:
    best, best_ratio = None, SIMILAR
    for e in candidates:
        if e.msgctxt != unit.kind:
            continue
        ratio = difflib.SequenceMatcher(None, e.msgid, unit.text).ratio()
        if ratio > best_ratio:
            best, best_ratio = e, ratio
    return best


@dataclass
class Status:
    units: int = 0
    current: int = 0  # translated, and the English it was made from is the page's
    outdated: list[Unit] | None = None  # translated from English that has changed since (fuzzy)
    untranslated: list[Unit] | None = None

    @property
    def complete(self) -> bool:
        return self.units > 0 and self.current == self.units


def status(page: Page, language: str) -> Status:
    """How much of the page is translated from its current English (the PO file as it is, not merged)."""
    po = load(page, language)
    entries = {(e.msgctxt, e.msgid): e for e in (po or []) if not e.obsolete}
    found = Status(outdated=[], untranslated=[])
    for unit in units(page):
        found.units += 1
        e = entries.get(_key(unit))
        if e is not None and e.msgstr and "fuzzy" not in e.flags:
            found.current += 1
        elif e is not None and e.msgstr or _has_translation_for_changed(unit, po):
            found.outdated.append(unit)
        else:
            found.untranslated.append(unit)
    return found


def _has_translation_for_changed(unit: Unit, po: polib.POFile | None) -> bool:
    """A translation made from other English than the page's now: an out-of-date paragraph, not a new one."""
    if po is None:
        return False
    stale = [e for e in po if e.msgstr and (e.obsolete or (e.msgctxt, e.msgid) != _key(unit))]
    return _closest(unit, stale) is not None


def translation(page: Page, language: str, kind: str, english: str) -> str | None:
    """The current (not out-of-date) translation of one unit of the page, or None."""
    po = load(page, language)
    for e in po or []:
        if not e.obsolete and e.msgctxt == kind and e.msgid == english and e.msgstr and "fuzzy" not in e.flags:
            return e.msgstr
    return None
