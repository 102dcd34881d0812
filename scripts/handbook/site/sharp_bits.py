"""The "Sharp bits of PyTorch" guide, gathered at build time from the Common pitfalls sections of the api pages.

A pitfall is a paragraph of that section that opens with a bold lead (`**Sizes must match.** ...`); the guide lists
the lead of each one and links it to its page. Only pages tagged `high-frequency` are gathered: the APIs most code
uses, so the list stays one page long. The guide's source page holds MARKER where the list goes.
"""

from __future__ import annotations

import re
from pathlib import Path

from handbook import DOCS
from handbook.site.nav import docs_path, flatten, module_tree, place, title
from handbook.verify.document import Page

MARKER = "<!-- sharp-bits -->"
TAG = "high-frequency"
_LEAD = re.compile(r"^\*\*(?P<lead>.+?)\*\*")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def pitfalls(page: Page) -> list[str]:
    """The bold leads of the page's pitfalls, links turned into their text (their targets are relative to the page)."""
    leads = []
    for pitfall in page.pitfalls():
        m = _LEAD.match(pitfall.text.strip())
        if m:
            leads.append(_LINK.sub(r"\1", m.group("lead")).strip())
    return leads


def gathered(pages: list[Page]) -> list[Page]:
    return [
        p
        for p in pages
        if p.kind == "api" and TAG in ((p.front or {}).get("tags") or []) and isinstance(p.front.get("api"), str)
    ]


def markdown(pages: list[Page], from_dir: str = "guides", docs: Path = DOCS) -> str:
    """The list that replaces MARKER: one H2 per module section, one bullet per page (linked), its pitfalls under it."""
    sections = module_tree()
    by_section: dict[str, list[Page]] = {}
    for page in gathered(pages):  # every page has a URL of its own (the render step checks it)
        section = place(sections, page.front["api"])
        by_section.setdefault(section.title if section else "Other", []).append(page)
    order = [s.title for s in flatten(sections)] + ["Other"]
    up = "../" * len(Path(from_dir).parts)
    out, total, sources = [], 0, set()
    for name in order:
        members = sorted(by_section.get(name, []), key=lambda p: p.front["api"].lower())
        items = [(p, lead) for p in members for lead in pitfalls(p)]
        if not items:
            continue
        out += [f"## {name}", ""]
        for page in members:
            leads = pitfalls(page)
            if leads:
                out.append(f"- **[`{title(page)}`]({up}{docs_path(page, docs)}#common-pitfalls)**")
                out += [f"    - {lead}" for lead in leads]
        out.append("")
        total += len(items)
        sources.update(p.rel for p, _ in items)
    head = f"{total} pitfalls from {len(sources)} pages."
    return "\n".join([head, "", *out])


def fill(text: str, pages: list[Page], from_dir: str = "guides", docs: Path = DOCS) -> str:
    """The page text with MARKER replaced by the gathered list; text without the marker is returned unchanged."""
    if MARKER not in text:
        return text
    return text.replace(MARKER, markdown(pages, from_dir, docs))
