"""The MkDocs adapter: only what has to happen inside MkDocs. The render step (`python -m handbook render`, build.py)
wrote the pages, the navigation and the configuration; this hook, named in that configuration, only

- on_config: fails the build without jieba (the search plugin would index Chinese text unsegmented) and loads the
  search data the render step wrote beside the configuration;
- on_page_context: gives the Tags page every tag, so a search for a tag name finds it (after the tags plugin
  listed the pages, before the search plugin indexes the page);
- on_post_build: patches mkdocs-material's search worker, typesets the built pages' math (math.py) and adds the
  search data to the built index (search_index.py), before the offline plugin inlines it.

It is the only module that imports MkDocs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from handbook.site import math, search_data, search_index

_data: dict = {}


@event_priority(100)
def on_config(config, **kwargs):
    try:
        import jieba  # noqa: F401
    except ImportError as exc:
        raise PluginError("jieba is not installed: Chinese search would silently break (pip install jieba)") from exc
    language = (config.extra.get("handbook") or {}).get("language", "en")
    path = Path(config.config_file_path).with_name(search_data.file(language))
    if not path.exists():
        raise PluginError(
            f"{path} not found: this configuration is not a rendered folder's. Run `python -m handbook render`, "
            "then `mkdocs build -f build/mkdocs.yml` (make site does both)"
        )
    _data.clear()
    _data.update(search_data.load(path))
    return config


# What the search index leaves out of a page's text, so that a result's snippet is its TL;DR (the summary under
# its title): the "TL;DR" label, the badges, the download links and the "Also searched as" line (its words are the
# page's `aliases` field already).
_SEARCH_EXCLUDED = re.compile(r'<(p|span) class="(hb-badges|hb-downloads|hb-aliases|hb-tldr-label|hb-added)"')


def on_page_content(html, page, config, files, **kwargs):
    return _SEARCH_EXCLUDED.sub(r'<\1 class="\2" data-search-exclude', html)


@event_priority(10)
def on_page_context(context, page, config, **kwargs):
    extra = _data["tags"].get(page.url)
    if extra:
        page.meta["tags"] = extra
    return context


# The theme announces the other language with <link rel="alternate" hreflang> in every page's head, its href
# relative (the site has no site_url: it is served from anywhere and read offline). hreflang needs a fully-qualified
# URL (Lighthouse's SEO audit fails a relative one), so without a site_url the head links are left out; the visible
# language switch (overrides/partials/alternate.html) is unchanged.
_HREFLANG_LINK = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[^"]*">\n?')


def on_post_page(output, page, config, **kwargs):
    return output if config.site_url else _HREFLANG_LINK.sub("", output)


@event_priority(-50)
def on_post_build(config, **kwargs):
    search_index.patch_worker(Path(config.site_dir))
    search_index.patch_bundle(Path(config.site_dir))
    try:
        math.prerender(Path(config.site_dir))
    except math.MathError as exc:
        raise PluginError(str(exc)) from exc
    path = Path(config.site_dir) / "search" / "search_index.json"
    if path.exists():
        index = json.loads(path.read_text(encoding="utf-8"))
        search_index.enrich(index, _data)
        path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
