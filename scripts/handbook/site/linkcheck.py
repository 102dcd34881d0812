"""`python -m handbook linkcheck [SITE]`: every internal link and anchor of the built site resolves."""

from __future__ import annotations

import posixpath
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from handbook import ROOT


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[int, str]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(name):
                self.ids.add(attrs[name])
        for name in ("href", "src"):
            if tag in ("a", "link", "script", "img") and attrs.get(name):
                self.links.append((self.getpos()[0], attrs[name]))


def _parse(path: Path) -> _Collector:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8", errors="replace"))
    return collector


def check(site: Path) -> list[str]:
    site = site.resolve()
    pages = {p: _parse(p) for p in sorted(site.rglob("*.html"))}
    problems = []
    for page, parsed in pages.items():
        for line, link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            path = unquote(parts.path)
            if path.startswith("/"):  # the 404 pages link from the site root; a browser drops '..' above it
                base, path = site, posixpath.normpath(path)
            else:
                base = page.parent
            target = (base / path.lstrip("/")).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site)}:{line}"
            if not target.exists():
                problems.append(f"{where}: broken link {link!r}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: missing anchor {link!r}")
    return problems


def main(site: str | None = None) -> int:
    root = Path(site) if site else ROOT / "site"
    if not root.is_dir():
        print(f"error: {root} is not a built site (run make site)", file=sys.stderr)
        return 2
    problems = check(root)
    for problem in problems:
        print(problem)
    print(f"linkcheck: {len(problems)} broken link(s) in {sum(1 for _ in root.rglob('*.html'))} pages", file=sys.stderr)
    return 1 if problems else 0
