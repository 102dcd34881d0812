"""`python -m handbook usage PATHS...`: rank torch APIs by the files of a body of code that use them, and measure
which have a page of their own in the handbook.

The corpus (usage/corpus.yml) names each repository with the commit it was read at; `--write` stores the ranking
in usage/ranking.json, which the Verification status page reads (top 100 and top 300 with a page).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import yaml

from handbook import DOCS, ROOT
from handbook.usage.scan import scan

USAGE = ROOT / "usage"
CORPUS = USAGE / "corpus.yml"
RANKING = USAGE / "ranking.json"
KEEP = 500  # APIs kept in the committed ranking
TOPS = (100, 300)


def page_index(docs: Path = DOCS) -> dict[str, str]:
    """api -> page (path from the repository root) for every api page."""
    from handbook.verify.document import parse_page

    found = {}
    for path in sorted(docs.rglob("*.md")):
        page = parse_page(path)
        api = (page.front or {}).get("api") if page.kind == "api" else None
        if isinstance(api, str):
            found[api] = page.rel
    return found


def page_for(api: str, pages: dict[str, str]) -> str | None:
    """The page of its own an API has: its own, or for a Tensor method the function of the same name
    (`torch.Tensor.sum` is torch.sum's page)."""
    if api in pages:
        return pages[api]
    if api.startswith("torch.Tensor."):
        return pages.get("torch." + api.removeprefix("torch.Tensor."))
    return None


def ranking(uses, pages: dict[str, str], keep: int = KEEP) -> list[dict]:
    ordered = sorted(uses.items(), key=lambda kv: (-kv[1], kv[0]))[:keep]
    return [{"rank": i + 1, "api": api, "files": n, "page": page_for(api, pages)} for i, (api, n) in enumerate(ordered)]


def coverage(rows: list[dict], pages: dict[str, str] | None = None) -> dict[str, dict]:
    """For the top 100 and 300: how many have a page, and which do not (pages re-read when given)."""
    out = {}
    for top in TOPS:
        head = rows[:top]
        has = [r for r in head if (page_for(r["api"], pages) if pages is not None else r["page"])]
        out[str(top)] = {"with_page": len(has), "of": len(head), "missing": [r["api"] for r in head if r not in has]}
    return out


def load(path: Path = RANKING) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def main(paths: list[str], write: bool = False, top: int = 40) -> int:
    corpus = yaml.safe_load(CORPUS.read_text(encoding="utf-8")) if CORPUS.exists() else {"repositories": []}
    folders = [Path(p) for p in paths]
    missing = [str(f) for f in folders if not f.exists()]
    if missing:
        print(f"error: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    result = scan(folders)
    pages = page_index()
    rows = ranking(result.uses, pages)
    cov = coverage(rows)
    print(
        f"{result.files} files read ({len(result.unparsable)} did not parse) in {time.perf_counter() - started:.0f} s"
    )
    for r in rows[:top]:
        print(f"{r['rank']:4d} {r['files']:6d}  {r['api']:55s} {r['page'] or '-- no page'}")
    for n, c in cov.items():
        print(f"top {n}: {c['with_page']} of {c['of']} have a page; missing: {', '.join(c['missing']) or 'none'}")
    if write:
        data = {
            "corpus": corpus.get("repositories", []),
            "files": result.files,
            "unparsable": len(result.unparsable),
            "apis": rows,
        }
        RANKING.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {RANKING.relative_to(ROOT)}")
    return 0
