"""What the site shows beyond single pages: the module tree, module index pages, the Tags and Verification pages.

Independent of MkDocs: each function takes parsed pages (and the record, the tag vocabulary) and returns plain
data or Markdown. The render step (build.py) writes them as generated pages and the configurations' nav.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

from handbook import DOCS
from handbook.i18n import catalog
from handbook.i18n.strings import current, t
from handbook.lint import audit, version_tags
from handbook.lint import categories as category_vocabulary
from handbook.lint import tags as vocabulary
from handbook.lint.modules import Section, flatten, module_tree, place
from handbook.site import coverage
from handbook.usage import rank
from handbook.verify.document import Page, parse_page

KIND_SECTIONS = {"guide": ("Guides", "guides"), "comparison": ("Comparisons", "comparisons")}
MIGRATION = ("Coming from TensorFlow, Keras and NumPy", "migration")


def load_pages(docs: Path = DOCS) -> list[Page]:
    return [parse_page(p) for p in sorted(docs.rglob("*.md"))]


def docs_path(page: Page, docs: Path = DOCS) -> str:
    return page.path.relative_to(docs.resolve()).as_posix()


@dataclass
class Site:
    sections: list[Section]
    guides: list[Page]
    comparisons: list[Page]
    migration: list[Page]
    other: list[Page]  # pages of no section (home, contributing, ...)


def organize(pages: list[Page], docs: Path = DOCS) -> Site:
    sections = module_tree()
    site = Site(sections, [], [], [], [])
    for page in pages:
        rel = docs_path(page, docs)
        api = page.front.get("api") if page.front else None
        if page.kind == "api" and isinstance(api, str) and place(sections, api):
            place(sections, api).pages.append(page)
        elif rel.startswith("migration/"):
            site.migration.append(page)
        elif page.kind in KIND_SECTIONS and rel.startswith(KIND_SECTIONS[page.kind][1] + "/"):
            (site.guides if page.kind == "guide" else site.comparisons).append(page)
        else:
            site.other.append(page)
    for section in flatten(sections):
        section.pages.sort(key=lambda p: p.front["api"].lower())
    return site


UNCATEGORIZED = {"id": "", "en": "Other", "zh": "其他"}


def by_category(section: Section) -> list[tuple[dict, list[Page]]]:
    """The section's pages grouped by front-matter category, in the order tags/categories.yml lists them; pages
    without a known category come last, under "Other" (lint HB011 fails them)."""
    known = category_vocabulary.of_module(section.title)
    groups: dict[str, list[Page]] = {c["id"]: [] for c in known}
    rest: list[Page] = []
    for page in section.pages:
        groups.get((page.front or {}).get("category"), rest).append(page)
    out = [(c, groups[c["id"]]) for c in known if groups[c["id"]]]
    return out + ([(UNCATEGORIZED, rest)] if rest else [])


def title(page: Page) -> str:
    """The page's H1 (an api page's is its API name), in the language being rendered when translated."""
    h1 = next((h.text for h in page.headings if h.level == 1), None)
    if h1 and current() != "en" and page.kind != "api":
        h1 = catalog.translation(page, current(), "heading", h1) or h1
    return (h1 or page.path.stem).strip("`")


def summary(page: Page) -> str:
    text = (page.front or {}).get("summary", "") or ""
    if text and current() != "en":
        text = catalog.translation(page, current(), "summary", text.strip()) or text
    return text


def _label(category: dict) -> str:
    return category.get(current(), category["en"])


def nav(site: Site, docs: Path = DOCS) -> list:
    """The MkDocs nav: module tree first, then guides, comparisons, migration, tags, status, contributing."""

    def section_nav(section: Section) -> dict:
        items: list = [section.index]
        items += [section_nav(child) for child in section.children]
        for category, pages in by_category(section):
            items.append({_label(category): [{title(p): docs_path(p, docs)} for p in pages]})
        return {section.title: items}

    def flat(name: str, folder: str, pages: list[Page]) -> dict:
        return {name: [f"{folder}/index.md", *({title(p): docs_path(p, docs)} for p in pages)]}

    others = {docs_path(p, docs): p for p in site.other}
    head = [{t("Home"): "index.md"}] if "index.md" in others else []
    tail = [{t("Contributing"): "contributing.md"}] if "contributing.md" in others else []
    rest = [{title(p): rel} for rel, p in sorted(others.items()) if rel not in ("index.md", "contributing.md")]
    return [
        *head,
        *(section_nav(s) for s in site.sections),
        flat(t("Guides"), "guides", site.guides),
        flat(t("Comparisons"), "comparisons", site.comparisons),
        flat(t(MIGRATION[0]), MIGRATION[1], site.migration),
        *rest,
        {t("Tags"): "tags.md"},
        {t("Verification status"): "verification.md"},
        {t("Deprecations"): "deprecations.md"},
        {t("Errors and warnings"): "errors.md"},
        *tail,
    ]


def _link(page: Page, from_dir: str, docs: Path) -> str:
    target = Path(docs_path(page, docs))
    depth = len(Path(from_dir).parts)
    return "../" * depth + target.as_posix()


def _listing(pages: list[Page], from_dir: str, docs: Path, what: str) -> list[str]:
    if not pages:
        return [t("No {what} yet.", what=t(what))]
    lines = [t("| page | summary |"), "|---|---|"]
    for p in pages:
        lines.append(f"| [{title(p)}]({_link(p, from_dir, docs)}) | {summary(p)} |")
    return lines


def index_pages(site: Site, docs: Path = DOCS) -> dict[str, str]:
    """docs-relative path -> Markdown of every generated index page that docs/ does not provide itself."""
    out: dict[str, str] = {}
    for section in flatten(site.sections):
        folder = str(Path(section.index).parent)
        lines = [f"# {section.title}", "", t(section.intro), ""]
        for child in section.children:
            lines += [f"- [{child.title}]({Path(child.index).relative_to(folder).as_posix()}) — {t(child.intro)}"]
        if section.children:
            lines.append("")
        groups = by_category(section)
        if groups:
            lines += [t("{n} entries in {k} categories.", n=len(section.pages), k=len(groups)), ""]
        for category, pages in groups:
            lines += [f"## {category['en']} · {category['zh']}", "", *_listing(pages, folder, docs, "entries"), ""]
        if not groups:
            lines += _listing(section.pages, folder, docs, "entries")
        out[section.index] = "\n".join(lines) + "\n"
    for (name, folder), pages in (
        (KIND_SECTIONS["guide"], site.guides),
        (KIND_SECTIONS["comparison"], site.comparisons),
        (MIGRATION, site.migration),
    ):
        out[f"{folder}/index.md"] = "\n".join([f"# {t(name)}", "", *_listing(pages, folder, docs, "pages")]) + "\n"
    return {path: text for path, text in out.items() if not (docs / path).exists()}


def tags_page(pages: list[Page], docs: Path = DOCS) -> str:
    lines = [
        f"# {t('Tags')}",
        "",
        t("Every tag of the handbook with its English and Chinese label, and the pages that carry it."),
        "",
        "| tag | English | 中文 | meaning | pages |",
        "|---|---|---|---|---|",
    ]
    for entry in vocabulary.load():
        tagged = [p for p in pages if entry["id"] in ((p.front or {}).get("tags") or [])]
        links = ", ".join(f"[{html.escape(title(p))}]({docs_path(p, docs)})" for p in tagged) or "—"
        lines.append(
            f'| <span id="tag-{entry["id"]}"></span>`{entry["id"]}` | {entry["en"]} | {entry["zh"]} '
            f"| {entry['description']} | {links} |"
        )
    return "\n".join([*lines, "", "## Pages by tag", "", "<!-- material/tags -->", ""])


STATE_ORDER = {"failed": 0, "stale": 1, "partial": 2, "unverified": 3, "skipped": 4, "verified": 5}
STATE_WORDS = {
    "verified": "verified",
    "failed": "failed",
    "stale": "stale",
    "partial": "main examples not run",
    "unverified": "not verified",
    "skipped": "nothing runs here",
}


def _module_of(page: Page, sections: list[Section]) -> str:
    api = (page.front or {}).get("api")
    placed = place(sections, api) if isinstance(api, str) else None
    if placed is not None:
        return placed.title
    return {"guide": "guides", "comparison": "comparisons"}.get(page.kind or "", Path(page.rel).parts[1])


def version_debt(pages: list[Page]) -> list[str]:
    """How many api pages the version data covers, and how many wait for the next probe (their Version history
    says "Not probed yet"): the debt stays in view until `versions probe --again` runs."""
    data = version_tags.load()
    if not data:
        return []
    apis = [p.front["api"] for p in pages if p.kind == "api" and isinstance((p.front or {}).get("api"), str)]
    waiting = [a for a in apis if a not in data.get("apis", {})]
    return [
        "",
        f"**Version history**: {len(apis) - len(waiting)} of {len(apis)} api pages are in the version data "
        f"({len(data['releases'])} torch releases probed); {len(waiting)} were written after the last probe and wait "
        "for the next one (`python -m handbook versions probe --again`): their Version history says so.",
    ]


def verification_page(pages: list[Page], record: dict, docs: Path = DOCS) -> str:
    """A summary of what ran and what did not, then one compact, filterable row per page, problems first."""
    totals = coverage.totals(pages, record)
    sections = module_tree()
    rows, machines = [], {}
    for page in pages:
        if not page.examples:
            continue
        states = coverage.states(page, record)
        for device, (state, info) in states.items():
            for name in (info or {}).get("machines", []) if state == "verified" else []:
                machines[device, name] = machines.get((device, name), 0) + 1
        cpu = states["cpu"][0]
        if cpu == "verified" and coverage.main_examples_not_run(page, states):
            cpu = "partial"
        not_run = [r for r in (coverage.block_label(e, states) for e in page.examples) if r]
        names = sorted({m for d in ("cpu", "cuda") for m in (states[d][1] or {}).get("machines", [])})
        rows.append((STATE_ORDER.get(cpu, 9), page, cpu, states["cuda"][0], names, len(not_run)))
    rows.sort(key=lambda r: (r[0], -r[5], r[1].rel))
    run, not_run = totals.run, totals.not_run
    lines = [
        "# Verification status",
        "",
        "What the verification record (`verification.json`, written only by the verifier) says, counted over the",
        "whole handbook; then one row per page with examples, problems first.",
        "",
        "## Summary",
        "",
        f"**{totals.pages} pages** hold **{totals.examples:,} examples** and **{totals.checks:,} claim checks**.",
        "",
        "| device | examples run | claim checks run |",
        "|---|---:|---:|",
        f"| CPU | {run['cpu']['example']:,} | {run['cpu']['check']:,} |",
        f"| CUDA | {run['cuda']['example']:,} | {run['cuda']['check']:,} |",
        "",
        "Not run: "
        + (
            "; ".join(f"{n:,} blocks: {html.escape(r)}" for r, n in sorted(not_run.items(), key=lambda x: -x[1]))
            or "none"
        )
        + ".",
        "",
        "| machine | device | pages verified |",
        "|---|---|---:|",
        *(f"| {html.escape(name)} | {device.upper()} | {n} |" for (device, name), n in sorted(machines.items())),
    ]
    if not machines:
        lines[-3:] = ["No page is verified on any machine yet."]
    try:
        audited = audit.load()
    except audit.AuditError:
        audited = []
    if audited:
        examined = sum(e["examined"] for e in audited)
        corrected = sum(e["corrected"] for e in audited)
        lines += [
            "",
            f"**Claims audit**: {len(audited)} pages read by an expert who tried to falsify each checkable statement "
            f"by running code; {examined:,} statements examined, {corrected:,} corrected "
            f"({sum(e['removed'] for e in audited):,} removed). Per page: `audit/*.yml`.",
        ]
    used = rank.load()
    if used:
        cov = rank.coverage(used["apis"], rank.page_index(docs))
        missing = cov["100"]["missing"]
        lines += [
            "",
            f"**Coverage of real usage**: of the torch APIs used in the most files of {used['files']:,} files of public "
            f"training code ({len(used['corpus'])} repositories, `usage/corpus.yml`), "
            f"{cov['100']['with_page']} of the top 100 and {cov['300']['with_page']} of the top 300 have a page of their own"
            + (f"; missing from the top 100: {', '.join(f'`{m}`' for m in missing)}." if missing else "."),
        ]
    lines += version_debt(pages)
    lines += [
        "",
        "## Pages",
        "",
        '<div class="hb-filter" hidden></div>',
        "",
        "| page | module | CPU | CUDA | machines | blocks not run |",
        "|---|---|---|---|---|---:|",
    ]
    for _, page, cpu, cuda, names, missing_blocks in rows:
        machines_cell = ", ".join(html.escape(n) for n in names) or "—"
        lines.append(
            f"| [{html.escape(title(page))}]({docs_path(page, docs)}) | {html.escape(_module_of(page, sections))} "
            f"| {STATE_WORDS.get(cpu, cpu)} | {STATE_WORDS.get(cuda, cuda)} | {machines_cell} | {missing_blocks or ''} |"
        )
    lines.append("")
    return "\n".join(lines) + "\n"
