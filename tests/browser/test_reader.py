"""What a reader does: copy an example and run it, read the home page, look at pages on a desktop and a phone."""

import concurrent.futures
import random
import subprocess
import sys
from pathlib import Path

import pytest

from handbook.bench.browser import serve

COPY_SAMPLE = 36  # pages whose first example is copied and run
from handbook.site.render import GPU_ONLY  # noqa: E402 - the marker render.py puts on CUDA-only examples


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


# The first code block under "## Examples" that is not an output (the signature block of "Official definition"
# is not an example).
_FIRST_EXAMPLE = """() => {
  const heading = document.getElementById("examples");
  if (!heading) return null;
  const isOutput = b => /^(Output|Sample output)/.test((b.querySelector(".filename") || {}).textContent || "");
  const blocks = [...document.querySelectorAll("article div.highlight")].filter(b => !isOutput(b));
  const first = blocks.find(b => heading.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (!first) return null;
  first.setAttribute("data-hb-first-example", "");
  return true;
}"""


def _api_pages(site: Path) -> list[str]:
    from handbook.site.nav import load_pages

    pages = [p for p in load_pages() if p.kind == "api"]
    return sorted(p.rel.removeprefix("docs/").removesuffix(".md") + "/" for p in pages)


def _copy_first_example(context, base: str, url: str) -> str | None:
    page = context.new_page()
    try:
        page.goto(base + url)
        if not page.evaluate(_FIRST_EXAMPLE):
            return None
        block = page.locator("[data-hb-first-example]")
        block.hover()
        block.locator("button[data-md-type=copy], button.md-clipboard").first.click()  # the theme's copy button
        return page.evaluate("navigator.clipboard.readText()")
    finally:
        page.close()


def _run(code: str, tmp: Path) -> subprocess.CompletedProcess:
    """Run copied text in a fresh Python, as a reader would: no handbook namespace, an empty folder."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin", "HOME": str(tmp)},
    )


def test_copied_first_examples_run_in_a_fresh_python(built_site, browser, tmp_path):
    candidates = _api_pages(built_site)
    sample = random.Random(16).sample(candidates, COPY_SAMPLE)
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    copied = {}
    with serve(built_site) as base:
        for url in sample:
            copied[url] = _copy_first_example(context, base, url)
    context.close()
    assert sum(1 for c in copied.values() if c) >= 30, copied
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        # an example fenced devices=cuda says so in its device line: it cannot run on a machine without a GPU
        runnable = {u: c if c and (GPU_ONLY not in c or _has_gpu()) else None for u, c in copied.items()}
        results = dict(
            zip(runnable, pool.map(lambda c: _run(c, tmp_path) if c else None, runnable.values()), strict=True)
        )
    for url, result in results.items():
        if result is not None and result.returncode != 0:
            failures.append(f"{url}: {result.stderr.strip().splitlines()[-1:]}")
    print(
        f"\ncopy and run: {sum(r is not None for r in results.values()) - len(failures)} of "
        f"{sum(r is not None for r in results.values())} first examples ran"
    )
    assert not failures, "\n".join(failures)


def test_copy_includes_the_device_line(built_site, browser):
    """A page whose first example uses `device`: the copied text defines it (the reader never sees a NameError)."""
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    with serve(built_site) as base:
        text = _copy_first_example(context, base, "torch/nn/conv2d/")
    context.close()
    assert text is not None and "device" in text
    assert 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in text


def test_home_page_has_the_module_map_numbers_search_hints_and_download(built_site, browser):
    from handbook.site.coverage import totals
    from handbook.site.home import verification_counts
    from handbook.site.nav import load_pages
    from handbook.verify import record

    pages, recorded = load_pages(), record.load()
    counts, blocks = verification_counts(pages, recorded), totals(pages, recorded)
    with serve(built_site) as base:
        page = browser.new_page()
        page.goto(base)
        text = page.locator("article").inner_text()
        assert (
            f"{counts['pages']} pages holding {blocks.examples:,} examples and {blocks.checks:,} claim checks" in text
        )
        assert page.locator("article table").first.get_by_role("link", name="torch.nn", exact=True).count() == 1
        for words in ["拼接", "显存", "concatenate", "Coming from NumPy", "performance checklist", "device"]:
            assert words in text, words
        assert page.locator("article a[href$='download/pytorch-handbook-offline.zip']").count() == 1
        assert page.locator(".hb-tldr").count() == 1


def test_api_page_shows_its_summary_as_tldr_and_math_renders(built_site, browser):
    with serve(built_site) as base:
        page = browser.new_page()
        page.goto(base + "torch/cat/")
        tldr = page.locator("article .hb-tldr")
        assert tldr.inner_text().startswith("TL;DR") and "Join a sequence of tensors" in tldr.inner_text()
        page.goto(base + "torch/nn/functional/softmax/")
        page.locator("details.quote summary").first.click()
        page.wait_for_selector(".arithmatex .katex", timeout=10_000)
        assert "\\(" not in page.locator("article").inner_text()


def test_nav_groups_every_module_by_category(built_site, browser):
    from handbook.lint import categories
    from handbook.site.nav import load_pages, module_tree, organize

    site = organize(load_pages())
    with serve(built_site) as base:
        page = browser.new_page()
        page.goto(base + "torch/nn/")
        nav = page.locator("nav.md-nav--primary").inner_text()
        text = page.locator("article").inner_text()
        for category in categories.of_module("torch.nn"):
            assert category["en"] in nav and category["zh"] in text
    assert len({s.title for s in module_tree()} - set(categories.load())) == 0
    assert all(p.front.get("category") for s in site.sections for p in s.pages)


SHOTS = [("home", ""), ("api-page", "torch/cat/"), ("comparison", "comparisons/cat-vs-stack/")]
WIDTHS = {"desktop": {"width": 1300, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("width", list(WIDTHS))
def test_screenshots_of_home_api_comparison_and_search(built_site, browser, screenshot, width):
    from handbook.bench.browser import open_search, search_ui

    with serve(built_site) as base:
        page = browser.new_page(viewport=WIDTHS[width])
        for name, url in SHOTS:
            page.goto(base + url)
            assert screenshot(page, f"{name}-{width}").stat().st_size > 10_000
        for name, query in (("search-en", "concatenate"), ("search-zh", "拼接")):
            page = browser.new_page(viewport=WIDTHS[width])
            open_search(page, base)
            ui = search_ui(page)
            page.locator(ui.box).press_sequentially(query)
            page.wait_for_selector(ui.item, timeout=10_000)
            page.wait_for_timeout(200)
            assert screenshot(page, f"{name}-{width}").stat().st_size > 10_000
