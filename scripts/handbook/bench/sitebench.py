"""`python -m handbook sitebench`: full site build time, search latency in Chromium, index and zip sizes.

Figures, not pass/fail: the machines here are noisy, so latency is the median over the search suite.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import yaml

from handbook import ROOT
from handbook.bench.browser import FreshSearch, chromium, expected_pages, open_search, search, search_fresh, serve
from handbook.site import build as render_step
from handbook.site import offline

QUERIES = ROOT / "tests" / "browser" / "search_queries.yml"
FRESH_QUERIES = ["concatenate", "拼接", "显存", "no_grad", "学习率", "卷积", "out of memory"]


def _offline_latency(browser, zip_path: Path, tmp: Path) -> list[FreshSearch]:
    """Each query typed on a freshly opened offline page, every request that is not file:// blocked."""
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(tmp / "offline")
    url = (tmp / "offline" / offline.FOLDER / "torch" / "cat.html").as_uri()
    context = browser.new_context()
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    out = [search_fresh(context, url, query) for query in FRESH_QUERIES]
    context.close()
    return out


def _ms(fresh: list[FreshSearch], field: str) -> str:
    values = [1000 * getattr(f, field) if f.results else math.nan for f in fresh]
    return (
        f"{statistics.median(values):.0f} ms median, {max(values):.0f} ms max ("
        + ", ".join(f"{q} {ms:.0f}" for q, ms in zip(FRESH_QUERIES, values, strict=True))
        + ")"
    )


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
        started = time.perf_counter()
        render_step.write(Path(tmp) / "build")
        subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(Path(tmp) / "build" / "mkdocs.yml")]
            + ["-d", str(site)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        build = time.perf_counter() - started
        started = time.perf_counter()
        zip_path = offline.build(site)
        offline_build = time.perf_counter() - started
        pages = sum(1 for _ in site.rglob("*.html"))
        index = site / "search" / "search_index.json"
        print(
            f"site build (render + mkdocs): {build:.1f} s ({pages} HTML pages); offline build and zip: {offline_build:.1f} s"
        )
        print(f"search index: {index.stat().st_size / 1024:.0f} KiB")
        print(f"offline zip: {zip_path.stat().st_size / 2**20:.2f} MiB")
        queries = yaml.safe_load(QUERIES.read_text(encoding="utf-8"))
        latencies, hits = [], 0
        with chromium() as browser, serve(site) as base:
            page = browser.new_page()
            open_search(page, base)
            for case in queries:
                results, seconds = search(page, case["query"])
                top = [r.rstrip("/") for r in results[:3]]
                hits += any(e.rstrip("/") in top for e in expected_pages(case))
                if not math.isnan(seconds):
                    latencies.append(seconds * 1000)
            print(f"search hit rate: {hits}/{len(queries)} ({100 * hits / len(queries):.0f}%) in the top 3")
            print(
                f"search latency: {statistics.median(latencies):.0f} ms median, {max(latencies):.0f} ms max "
                f"(keystroke to first result on the page's own clock, {len(latencies)} queries, headless Chromium)"
            )
            fresh = _offline_latency(browser, zip_path, Path(tmp))
            print(f"offline search on a freshly opened page from file://, {len(fresh)} queries typed at once:")
            print(f"  first key to first result: {_ms(fresh, 'first')}")
            print(f"  last key to the whole query's results: {_ms(fresh, 'final')}")
            print(f"  first key to last key (Playwright's typing): {_ms(fresh, 'typing')}")
    return 0
