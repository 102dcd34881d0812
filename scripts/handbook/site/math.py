"""Math typeset at build time: every pymdownx.arithmatex element of the built site rendered by the vendored KaTeX
in Node (render_math.js), so pages carry KaTeX's HTML and stylesheet, not its script (Lighthouse: the script's
rendering was the longest task of a page with formulas)."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

from handbook import ROOT
from handbook.site.prebuilt_index import node

KATEX = ROOT / "overrides" / "assets" / "vendor" / "katex" / "katex.min.js"
SCRIPT = Path(__file__).with_name("render_math.js")
# arithmatex's generic output: <span class="arithmatex">\( … \)</span> and <div class="arithmatex">\[ … \]</div>
ELEMENT = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])([^<]*?)\\[)\]]\s*</\1>')  # TeX is escaped: no <


class MathError(RuntimeError):
    pass


def prerender(site_dir: Path) -> int:
    """Typeset the math of every page under site_dir in place; returns how many formulas."""
    texts = {p: p.read_text(encoding="utf-8") for p in sorted(site_dir.rglob("*.html"))}
    pages = {p: text for p, text in texts.items() if 'class="arithmatex"' in text}
    found = [m for text in pages.values() for m in ELEMENT.finditer(text)]
    if not pages:
        return 0
    node_path = node()
    if node_path is None:
        raise MathError("node is not installed: math is typeset at build time (pip install -r requirements.txt)")
    formulas = [[html.unescape(m.group(3)), m.group(2) == "["] for m in found]
    result = subprocess.run(
        [node_path, str(SCRIPT), str(KATEX)], input=json.dumps(formulas), capture_output=True, text=True
    )
    if result.returncode != 0:
        raise MathError(f"typesetting math failed:\n{result.stderr}")
    rendered = iter(json.loads(result.stdout))
    for page, text in pages.items():
        out = ELEMENT.sub(lambda m: f'<{m.group(1)} class="arithmatex">{next(rendered)}</{m.group(1)}>', text)
        if 'class="arithmatex">\\' in out:
            raise MathError(f"{page}: an arithmatex element was left untypeset")
        page.write_text(out, encoding="utf-8")
    return len(formulas)
