"""The Zensical adapter: what the render step cannot write into the pages, applied to Zensical's built site.

Zensical runs no hooks; its search (its own engine, not lunr) takes the index language from theme.language only,
so the handbook's English site would get no Chinese word segmentation. This sets the built index's languages to
mkdocs.yml's `search: lang` ([en, zh]): Zensical's worker then splits Chinese text with the browser's
Intl.Segmenter. It also leaves code and output blocks out of the indexed text, as the MkDocs adapter does
(search_index.enrich): tensor values and variable names no reader searches for. Run after `zensical build`:
`python -m handbook.site.zensical_adapter SITE`. Then it typesets the built pages' math, as the MkDocs adapter
does (math.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from handbook.site import math, site_config
from handbook.site.build import DEFAULT_OUT

_PRE = re.compile(r"<pre>.*?</pre>", re.S)


class AdapterError(RuntimeError):
    pass


def search_languages() -> list[str]:
    for entry in site_config.load_source().get("plugins", []):
        if isinstance(entry, dict) and "search" in entry:
            return list((entry["search"] or {}).get("lang") or ["en"])
    return ["en"]


OFFLINE_PREFIX = "var __index = "  # search.js, the index the offline build loads from file://


def _patch(index: object, path: Path, languages: list[str]) -> object:
    if not isinstance(index, dict) or "config" not in index or "items" not in index:
        raise AdapterError(
            f"{path}: not the index Zensical 0.0.73 writes ({{config, items}}): review zensical_adapter.py"
        )
    index["config"]["lang"] = languages
    for item in index["items"]:
        item["text"] = _PRE.sub(" ", item["text"])
    return index


def patch_search(site: Path, languages: list[str]) -> Path:
    """Patch search.json and, in an offline build, search.js (the same index as a script)."""
    path = site / "search.json"
    if not path.exists():
        raise AdapterError(f"{path}: no search index (did zensical build write this site?)")
    index = _patch(json.loads(path.read_text(encoding="utf-8")), path, languages)
    path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    script = site / "search.js"
    if script.exists():
        text = script.read_text(encoding="utf-8")
        if not text.startswith(OFFLINE_PREFIX):
            raise AdapterError(f"{script}:1: does not start with {OFFLINE_PREFIX!r}: review zensical_adapter.py")
        body = text[len(OFFLINE_PREFIX) :].rstrip().removesuffix(";")
        index = _patch(json.loads(body), script, languages)
        script.write_text(
            OFFLINE_PREFIX + json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
        )
    return path


def apply(site: Path) -> None:
    """Everything this adapter does to a site Zensical built."""
    patch_search(site, search_languages())
    math.prerender(site)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0]) if args else site_config.site_dir("zensical", DEFAULT_OUT)
    try:
        apply(site)
    except (AdapterError, math.MathError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
