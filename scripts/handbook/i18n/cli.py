"""`python -m handbook i18n update|status [PATHS]`: keep the translations' PO files in step with the English pages.

- `update` merges each page's current English into `i18n/<lang>/<page>.po` (new paragraphs empty, changed ones
  fuzzy with their old translation and previous English, vanished ones obsolete) and prints what changed;
- `status` lists every paragraph whose translation is out of date (`path:line: HB120 ...`) and counts what is
  untranslated; it exits 1 when anything is out of date, so the out-of-date list is empty on main.
"""

from __future__ import annotations

import sys

from handbook.i18n import catalog
from handbook.verify.document import collect, parse_page


def _pages(paths: list[str] | None):

    return [p for p in (parse_page(path) for path in collect(paths)) if not p.unreadable]


def update(paths: list[str] | None, language: str = "zh") -> int:
    totals = {"kept": 0, "new": 0, "fuzzy": 0, "obsolete": 0}
    for page in _pages(paths):
        po, counts = catalog.update(page, language)
        path = catalog.po_path(page, language)
        path.parent.mkdir(parents=True, exist_ok=True)
        po.save(str(path))
        for key, n in counts.items():
            totals[key] += n
        if counts["new"] or counts["fuzzy"] or counts["obsolete"]:
            print(f"{path.relative_to(catalog.ROOT)}: {counts['new']} new, {counts['fuzzy']} out of date, "
                  f"{counts['obsolete']} obsolete")  # fmt: skip
    print(", ".join(f"{n} {k}" for k, n in totals.items()), file=sys.stderr)
    return 0


def status(paths: list[str] | None, language: str = "zh", show_untranslated: bool = False) -> int:
    pages = _pages(paths)
    complete = outdated = untranslated = units = 0
    for page in pages:
        found = catalog.status(page, language)
        units += found.units
        complete += found.complete
        for unit in found.outdated or []:
            outdated += 1
            print(f"{page.rel}:{unit.line}: HB120 the {language} translation of this {unit.kind} is out of date")
        for unit in found.untranslated or []:
            untranslated += 1
            if show_untranslated:
                print(f"{page.rel}:{unit.line}: untranslated {unit.kind}")
    print(
        f"{language}: {complete} of {len(pages)} pages complete and current; {outdated} out of date, "
        f"{untranslated} untranslated of {units} paragraphs",
        file=sys.stderr,
    )
    return 1 if outdated else 0
