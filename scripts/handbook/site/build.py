"""`python -m handbook render`: the render step as its own stage. It writes a folder a site generator only converts.

OUT/docs/           every page's final Markdown (badges, official definitions, outputs, TL;DR, version history,
                    notes from changes reports, sharp bits, the home page's generated parts), the generated pages
                    (module indexes, Tags, Verification status, Deprecations, What changed in torch X) and a copy
                    of every other file of docs/ (stylesheets, verification.json);
OUT/mkdocs.yml      the complete MkDocs configuration for that folder (site_config.py);
OUT/zensical.yml    the same for Zensical (with OUT/overrides-zensical/, the theme overrides it can use);
OUT/search-data.json  what the search index needs beyond the pages (search_data.py).
OUT/docs-zh/, OUT/mkdocs-zh.yml, OUT/zensical-zh.yml, OUT/search-data-zh.json: the same for the Chinese edition
                    (its site goes to site/zh/): every page's prose from its translation (i18n/), its code, outputs,
                    checks and badges the English page's own.

Each page keeps only the front matter a site generator reads: `tags` and `search` (boost or exclude). Nothing
here imports a site generator; verification is only read (docs/verification.json).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from handbook import DOCS, ROOT
from handbook.i18n import strings
from handbook.i18n.catalog import LANGUAGES
from handbook.i18n.translate import translate
from handbook.lint import maps, tags
from handbook.releases import changes
from handbook.site import coverage, downloads, errors, history, home, render, search_data, sharp_bits, site_config
from handbook.site import nav as site_nav
from handbook.verify import record as records
from handbook.verify.document import Page, parse_page

DEFAULT_OUT = ROOT / "build"
SITE_URL = "https://pytorch-handbook.example/"  # what a downloaded script names as its source (site_url-free site)
SEARCH_BOOST = {"api": 3, "comparison": 2, "guide": 1.5}
MAP_PAGE_BOOST = 4
GENERATED_BOOST = 0.5  # generated listings repeat every page title: keep them from outranking the pages
TAGS_PAGE_BOOST = 5


@dataclass
class Rendered:
    """One page of the rendered folder."""

    markdown: str
    search: dict
    tags: list[str] | None = None  # the front matter's, even empty (the search index then has `tags: []`)
    aliases: list[str] = field(default_factory=list)
    api: str | None = None
    index_tags: list[str] = field(default_factory=list)  # indexed as tags, not shown as them
    generated: bool = False
    files: dict[str, str] = field(default_factory=dict)  # name -> text, written beside the page (its downloads)

    def text(self) -> str:
        front = {"search": self.search}
        if self.tags is not None:
            front["tags"] = self.tags
        head = yaml.safe_dump(front, allow_unicode=True, sort_keys=False)
        return f"---\n{head}---\n\n{self.markdown}"


def page_url(rel: str, directory_urls: bool = True) -> str:
    """The page's URL as MkDocs and Zensical write it (the search index's `location`): torch/cat/ and "" for the
    home page; the offline copy (no directory URLs) has torch/cat.html and index.html."""
    if not directory_urls:
        return Path(rel).with_suffix(".html").as_posix()
    path = Path(rel).with_suffix("")
    if path.name == "index":
        path = path.parent
    text = path.as_posix()
    return "" if text == "." else f"{text}/"


class Renderer:
    def __init__(self, docs: Path = DOCS, offline: bool = False, language: str = "en"):
        self.docs = docs
        self.offline = offline
        self.language = language
        self.record = records.load(docs / "verification.json")
        self.maps = maps.load_all()
        self.pages = site_nav.load_pages(docs)
        self.site = site_nav.organize(self.pages, docs)
        self.changes = changes.committed()
        self.notes = [(r, changes.notes(r, docs)) for r in self.changes]

    def nav(self) -> list:
        nav = site_nav.nav(self.site, self.docs)
        if self.changes:  # the What-changed pages, newest release first, right after Home
            what = {
                "What changed": [{f"torch {changes.version(r, 'new')}": changes.page_path(r)} for r in self.changes]
            }
            nav.insert(1 if nav and nav[0] == {"Home": "index.md"} else 0, what)
        return nav

    def page(self, parsed: Page) -> Rendered:
        source = parsed.path
        text = source.read_text(encoding="utf-8")
        if self.language != "en":  # the prose translated; code, outputs and checks the English page's own
            text = translate(parsed, self.language).text
        rel = site_nav.docs_path(parsed, self.docs)
        front = parsed.front or {}
        search = {"boost": SEARCH_BOOST.get(front.get("kind"), 1)}
        map_words = maps.search_words(text, self.maps)
        if map_words:  # the page that answers "what is tf.concat called here"
            search = {"boost": MAP_PAGE_BOOST}
        # the error and warning messages its examples show: a pasted message finds the page (errors.py)
        aliases = [str(a) for a in front.get("aliases") or []] + map_words + errors.search_words(parsed)
        api = front.get("api") if front.get("kind") == "api" and front.get("api") else None
        text = sharp_bits.fill(text, self.pages, str(Path(rel).parent), self.docs)
        named = [(r, by_page[rel]) for r, by_page in self.notes if rel in by_page]
        english_lines = [ex.line for ex in parsed.examples] if self.language != "en" else None
        out = render.render(text, source, self.record, self.maps, english_lines)
        # the page's source beside it, for a reader who wants to propose an edit (the site has no repository link)
        files = {f"{source.name}.txt": source.read_text(encoding="utf-8")}
        runnable = parse_page(source, text) if parsed.examples else None
        if runnable is not None:  # the page's examples to take away: a script and a notebook
            stem, name = source.stem, site_nav.title(parsed)
            address = f"{SITE_URL}{'' if self.language == 'en' else self.language + '/'}{page_url(rel)}"
            files[f"{stem}.py"] = downloads.script(runnable, name, address)
            files[f"{stem}.ipynb"] = downloads.notebook(runnable, name, address)
            out = render.add_downloads(out, stem, downloads.blocks_json(runnable))
        else:
            out = render.add_downloads(out, source.stem, None)
        for report, entries in reversed(named):
            out = changes.insert_note(out, changes.note(report, rel, entries))
        if rel == "index.md":  # the home page's module map, verification numbers and tags
            out = home.expand(out, self.site, self.pages, self.record, self.offline)
            if self.changes:
                out = changes.home_link(out, self.changes[0])
        page_tags = [str(t) for t in front["tags"] or []] if "tags" in front else None
        return Rendered(out, search, page_tags, aliases, api, files=files)

    def generated(self) -> dict[str, Rendered]:
        texts = site_nav.index_pages(self.site, self.docs)
        texts["tags.md"] = site_nav.tags_page(self.pages, self.docs)
        texts["verification.md"] = site_nav.verification_page(self.pages, self.record, self.docs)
        for report in self.changes:
            texts[changes.page_path(report)] = changes.page(report, self.docs)
        texts["deprecations.md"] = history.deprecations_page(self.pages, self.docs)
        texts["errors.md"] = errors.page(self.pages, self.docs)
        out = {path: Rendered(text, {"boost": GENERATED_BOOST}, generated=True) for path, text in texts.items()}
        out["verification.md"].search = {"exclude": True}
        out["tags.md"].search = {"boost": TAGS_PAGE_BOOST}
        out["tags.md"].aliases = [w for e in tags.load() for w in (e["id"], e["en"], e["zh"])]
        out["tags.md"].index_tags = tags.ids()  # so a search for a tag name finds the Tags page itself
        return out

    def all_pages(self) -> dict[str, Rendered]:
        out = {site_nav.docs_path(p, self.docs): self.page(p) for p in self.pages}
        for path, page in self.generated().items():
            if path in out:
                raise RenderError(f"{self.docs / path}: a generated page has this path too")
            out[path] = page
        check_urls(list(out), self.docs)
        return out


class RenderError(ValueError):
    pass


def check_urls(paths: list[str], docs: Path) -> None:
    """Two pages that become one URL (a.md and a/index.md are both a/): one would overwrite the other in the site."""
    seen: dict[str, str] = {}
    for rel in sorted(paths):
        url = page_url(rel)
        if url in seen:
            raise RenderError(
                f"{docs / rel}: its URL /{url} is also {docs / seen[url]}'s (generated pages: handbook/site/nav.py); "
                "rename one of them"
            )
        seen[url] = rel


def write(out: Path = DEFAULT_OUT, docs: Path = DOCS, offline: bool = False) -> dict[str, Rendered]:
    """Render every page into out/docs (English) and out/docs-zh (Chinese) and write each language's
    configurations and search data. Returns the English pages."""
    english = _write_language(out, docs, offline, "en")
    for language in LANGUAGES:
        _write_language(out, docs, offline, language)
    return english


def _write_language(out: Path, docs: Path, offline: bool, language: str) -> dict[str, Rendered]:
    renderer = Renderer(docs, offline, language)
    with strings.language(language):
        pages = renderer.all_pages()
        nav = renderer.nav()
    suffix = "" if language == "en" else f"-{language}"
    target = out / f"docs{suffix}"
    if target.exists():
        shutil.rmtree(target)  # a page removed from docs/ must not stay in the site
    for path in sorted(docs.rglob("*")):
        if path.is_file() and path.suffix != ".md":
            dest = target / path.relative_to(docs)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
    for rel, page in pages.items():
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(page.text(), encoding="utf-8")
        for name, text in page.files.items():
            (dest.parent / name).write_text(text, encoding="utf-8")
    search_data.write(out / search_data.file(language), [(page_url(rel, not offline), p) for rel, p in pages.items()])
    # The banner on every page counts what ran and what did not (coverage.py): never "every example was run".
    totals = coverage.totals(renderer.pages, renderer.record)
    with strings.language(language):
        env = {**records.environment(), "coverage": coverage.banner(totals), "language": language}
    for generator in site_config.GENERATORS:
        site_config.write(out, generator, nav, env, offline, tags.ids(), language)
    return pages


def main(out: str | None = None, offline: bool = False) -> int:
    import time

    started = time.perf_counter()
    target = Path(out) if out else DEFAULT_OUT
    pages = write(target, offline=offline)
    generated = sum(p.generated for p in pages.values())
    print(
        f"rendered {len(pages)} pages ({generated} generated) into {target / 'docs'} in "
        f"{time.perf_counter() - started:.1f} s; configurations: "
        + ", ".join(str(target / name) for name in site_config.GENERATORS.values())
    )
    return 0
