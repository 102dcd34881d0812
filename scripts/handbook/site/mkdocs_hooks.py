"""MkDocs hooks: the render step of the pipeline. They only show what the verifier recorded.

- on_config: nav from the module tree, versions in header and footer, tags_allowed from tags/tags.yml, jieba check.
- on_files: generated pages (module indexes, Tags, Verification status, What changed in torch X).
- on_page_markdown: badges, signature, output blocks and tabs (render.py); on pages a changes report names, a
  note linking the What-changed page and an anchor on each example it names (changes.py); the Sharp bits list
  (sharp_bits.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from handbook.lint import maps, tags
from handbook.releases import changes, history
from handbook.site import home, math, render, search_index, sharp_bits
from handbook.site import nav as site
from handbook.verify import record

IFRAME_WORKER = "assets/vendor/iframe-worker/shim.js"
_state: dict = {"record": {}, "pages": [], "site": None, "aliases": {}, "api": {}}


@event_priority(100)  # before the tags plugin reads tags_allowed in its own on_config
def on_config(config, **kwargs):
    from material.plugins.tags.structure.tag import Tag

    try:
        import jieba  # noqa: F401
    except ImportError as exc:  # the search plugin would silently index Chinese text unsegmented
        raise PluginError("jieba is not installed: Chinese search would silently break (pip install jieba)") from exc
    plugin = config.plugins.get("material/tags")
    if plugin is not None:
        plugin.config.tags_allowed = {Tag(t) for t in tags.ids()}
    docs = Path(config.docs_dir)
    _state["record"] = record.load(docs / "verification.json")
    _state["maps"] = maps.load_all()
    _state["pages"] = site.load_pages(docs)
    _state["site"] = site.organize(_state["pages"], docs)
    config.nav = site.nav(_state["site"], docs)
    _state["changes"] = changes.committed()
    _state["notes"] = [(r, changes.notes(r, docs)) for r in _state["changes"]]
    if _state["changes"]:  # the What-changed pages, newest release first, right after Home
        what = {
            "What changed": [{f"torch {changes.version(r, 'new')}": changes.page_path(r)} for r in _state["changes"]]
        }
        config.nav.insert(1 if config.nav and config.nav[0] == {"Home": "index.md"} else 0, what)
    env = record.environment()
    offline = os.environ.get("HANDBOOK_OFFLINE", "").lower() in ("1", "true")
    config.extra["handbook"] = {**env, "offline": offline}
    if offline:  # the vendored shim, so the offline plugin does not add unpkg.com's
        config.extra["polyfills"] = [IFRAME_WORKER]
    config.copyright = f"Examples verified against torch {env['torch']} · torchvision {env['torchvision']}"
    return config


def on_files(files, config, **kwargs):
    docs = Path(config.docs_dir)
    generated = site.index_pages(_state["site"], docs)
    generated["tags.md"] = site.tags_page(_state["pages"], docs)
    generated["verification.md"] = site.verification_page(_state["pages"], _state["record"], docs)
    for report in _state.get("changes") or []:
        generated[changes.page_path(report)] = changes.page(report, docs)
    generated["deprecations.md"] = history.deprecations_page(_state["pages"], docs)
    for path, text in generated.items():
        files.append(File.generated(config, path, content=text))
    return files


SEARCH_BOOST = {"api": 3, "comparison": 2, "guide": 1.5}
MAP_PAGE_BOOST = 4


def on_page_markdown(markdown, page, config, **kwargs):
    source = Path(page.file.abs_src_path) if page.file.abs_src_path else None
    if page.file.generated_by is not None or page.file.abs_src_path is None:
        # Generated listings repeat every page title: keep them from outranking the pages themselves.
        page.meta["search"] = {"exclude": True} if page.file.src_uri == "verification.md" else {"boost": 0.5}
        if page.file.src_uri == "tags.md":
            page.meta["search"] = {"boost": 5}
            _state["aliases"][page.url] = [w for e in tags.load() for w in (e["id"], e["en"], e["zh"])]
        return markdown
    page.meta.setdefault("search", {"boost": SEARCH_BOOST.get(page.meta.get("kind"), 1)})
    text = source.read_text(encoding="utf-8")
    map_words = maps.search_words(text, _state["maps"])
    if map_words:  # the page that answers "what is tf.concat called here"
        page.meta["search"] = {"boost": MAP_PAGE_BOOST}
    words = [str(a) for a in page.meta.get("aliases") or []] + map_words
    if words:
        _state["aliases"][page.url] = words
    if page.meta.get("kind") == "api" and page.meta.get("api"):
        _state["api"][page.url] = page.meta["api"]
    rel = page.file.src_uri
    text = sharp_bits.fill(text, _state["pages"], str(Path(rel).parent), Path(config.docs_dir))
    named = [(r, by_page[rel]) for r, by_page in _state.get("notes") or [] if rel in by_page]
    for _report, entries in named:
        text = changes.add_anchors(text, entries)
    out = render.render(text, source, _state["record"], _state["maps"])
    for report, entries in reversed(named):
        out = changes.insert_note(out, changes.note(report, rel, entries))
    if rel == "index.md":  # the home page's module map, verification numbers and tags
        offline = config.extra["handbook"]["offline"]
        out = home.expand(out, _state["site"], _state["pages"], _state["record"], offline)
        if _state.get("changes"):
            out = changes.home_link(out, _state["changes"][0])
    return out


@event_priority(10)  # before the search plugin indexes the page
def on_page_context(context, page, config, **kwargs):
    if page.file.src_uri == "tags.md":  # so a search for a tag name finds the Tags page itself
        page.meta["tags"] = tags.ids()
    return context


@event_priority(-50)  # after the search plugin wrote its index, before the offline plugin inlines it
def on_post_build(config, **kwargs):
    search_index.patch_worker(Path(config.site_dir))
    try:
        math.prerender(Path(config.site_dir))
    except math.MathError as exc:
        raise PluginError(str(exc)) from exc
    path = Path(config.site_dir) / "search" / "search_index.json"
    if path.exists():
        index = json.loads(path.read_text(encoding="utf-8"))
        search_index.enrich(index, _state["aliases"], _state["api"])
        path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
