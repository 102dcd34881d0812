"""What the search index needs beyond the pages' text, produced by the render step (search-data.json).

Per page URL: `aliases`, the front matter's search words (and a migration map's names), English and Chinese,
segmented with jieba; `api`, the API's dotted name and its last part. The Tags page also carries every tag id as
its `tags`, so a search for a tag name finds it. A site generator's adapter adds these to its built index.

Chinese: jieba splits text into words joined by U+200B; a word of one Han character left on its own makes the
browser's greedy query segmentation cut a two-character query down to that character, so such single characters
are joined to their neighbour (U+200B is invisible, so the page text does not change), and one that stands alone
between other words (numpy 转 tensor) is left out of the index.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

FILE = "search-data.json"


def file(language: str = "en") -> str:
    """The search data of a language's build, beside its configuration (search-data-zh.json)."""
    return FILE if language == "en" else FILE.replace(".json", f"-{language}.json")


ZWSP = "\u200b"
_HAN = "\u4e00-\u9fff"
_HAN_RUN = re.compile(rf"[{_HAN}][{_HAN}{ZWSP}]*[{_HAN}]")
_LONE_HAN = re.compile(rf"(?<![{_HAN}\w])[{_HAN}](?![{_HAN}\w])")


def _merge_single_characters(run: str) -> str:
    words = run.split(ZWSP)
    merged: list[str] = []
    for word in words:
        if merged and (len(word) == 1 or len(merged[-1]) == 1):
            merged[-1] += word
        else:
            merged.append(word)
    return ZWSP.join(merged)


def join_single_han(text: str) -> str:
    """No index key of one Han character: merge it with its Han neighbour, or drop it when it stands alone."""
    text = _HAN_RUN.sub(lambda m: _merge_single_characters(m.group()), text)
    return _LONE_HAN.sub(" ", text)


def segment(words: list[str]) -> str:
    """The words as one index field: Chinese ones split by jieba, all joined by U+200B."""
    import jieba

    parts = [ZWSP.join(jieba.cut(w)) if re.search(f"[{_HAN}]", w) else w for w in words]
    return join_single_han(f" {ZWSP} ".join(parts).replace(" ", ZWSP))


def api_field(api: str) -> str:
    """torch.nn.functional.conv2d is found by its full name and by conv2d."""
    return ZWSP.join([api, api.rsplit(".", 1)[-1]])


def build(pages: list) -> dict:
    """pages: (URL, rendered page) pairs (build.check_urls makes each URL one page's)."""
    data: dict = {"aliases": {}, "api": {}, "tags": {}}
    for url, page in pages:
        if page.aliases:
            data["aliases"][url] = segment(page.aliases)
        if page.api:
            data["api"][url] = api_field(page.api)
        if page.index_tags:
            data["tags"][url] = page.index_tags
    return data


def write(path: Path, pages: list) -> dict:
    data = build(pages)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return data


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
