"""Drive Debian's Chromium with Playwright: serve a built site, search it as a reader would.

Shared by the browser tests and `python -m handbook sitebench`. Playwright's own browser download cannot work on
these machines, so the system Chromium is used (`apt-get install chromium`).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

# Records the search worker's messages, so a test knows when the index is ready.
_WATCH_WORKER = """
window.__searchReady = false;
const RealWorker = window.Worker;
window.Worker = function (url, options) {
  const worker = new RealWorker(url, options);
  worker.addEventListener("message", (ev) => { if (ev.data && ev.data.type === 1) window.__searchReady = true; });
  return worker;
};
// From file:// the worker is an iframe (iframe-worker) that posts its messages to this window.
window.addEventListener("message", (ev) => { if (ev.data && ev.data.type === 1) window.__searchReady = true; });
// The page's own clock, keystroke to results: the first key released in the search box after search() resets it
// (mkdocs-material sends the query on keyup), and the first result item in the document after that (Zensical's
// results live in a shadow root).
window.__hbKey = null;
window.__hbFirst = null;
document.addEventListener("keyup", (e) => {
  if (window.__hbKey === null && e.target.matches && e.target.matches(".md-search__input")) window.__hbKey = performance.now();
}, true);
new MutationObserver(() => {
  if (window.__hbKey !== null && window.__hbFirst === null && document.querySelector(".md-search-result__item"))
    window.__hbFirst = performance.now();
}).observe(document, { childList: true, subtree: true });
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


COMPRESSED = (".html", ".css", ".js", ".json", ".svg", ".txt", ".xml")


class _Compressing(_Quiet):
    """Text files gzip-compressed when the client accepts it, as GitHub Pages and other static hosts serve them."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                return super().send_head()  # the redirect of a folder named without its slash
            path = path / "index.html"
        if not (path.suffix in COMPRESSED and path.is_file() and "gzip" in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


@contextlib.contextmanager
def serve(root: Path, compress: bool = False) -> Iterator[str]:
    """Serve a folder on 127.0.0.1 (text gzip-compressed when compress, as a static host does); yields the base
    URL."""
    handler = _Compressing if compress else _Quiet
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium():
    """A headless Chromium; fails with a clear message when it is not installed."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium` (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass(frozen=True)
class SearchUI:
    """Where a theme's search box and results are. Zensical's search is its own dialog in an open shadow root
    (Playwright's CSS selectors pierce it), opened by a button; its results are sections, several per page."""

    box: str
    item: str
    link: str
    opener: str | None = None


MATERIAL = SearchUI(
    ".md-search__input", ".md-search-result__item", ".md-search-result__item > a.md-search-result__link"
)
ZENSICAL = SearchUI(
    'dialog input[role="combobox"]',
    'ol[aria-label="Search results"] a[role="option"]',
    'ol[aria-label="Search results"] a[role="option"]',
    opener="button.md-search__button",
)


def search_ui(page) -> SearchUI:
    return ZENSICAL if page.locator(ZENSICAL.opener).count() else MATERIAL


def _focus_box(page, ui: SearchUI) -> None:
    if ui.opener:
        page.locator(ui.opener).click()
        page.locator(ui.box).wait_for()
        return
    box = page.locator(ui.box)
    button = page.locator('label.md-header__button[for="__search"]')
    if button.is_visible():  # a phone-width page opens search from the header's button, which focuses the box
        button.click()
        box.focus()
    else:
        box.click()


def open_search(page, url: str) -> None:
    """Load a page and wait until its search index is ready to answer."""
    page.add_init_script(_WATCH_WORKER)
    page.goto(url)
    _focus_box(page, search_ui(page))
    page.wait_for_function("window.__searchReady === true", timeout=30_000)


def search(page, query: str, timeout_ms: int = 5000, keys: bool = False) -> tuple[list[str], float]:
    """Type a query; return the result links (site-relative, without query strings) and seconds to first result.

    By default the box is filled and one key pressed (Material searches on keyup): the time is then that of one
    search, the online latency, read from the page's own clock (that key's keyup to the first result in the
    document; from outside, Playwright's round trips add 30-40 ms) where the page was opened by open_search. keys=True types
    every character as its own key event, as a reader does; the results are read once the list has settled.
    """
    ui = search_ui(page)
    box = page.locator(ui.box)
    box.fill("")
    page.wait_for_selector(ui.item, state="detached", timeout=timeout_ms)  # the last query's results are gone
    page.evaluate("window.__hbKey = null; window.__hbFirst = null")
    started = time.perf_counter()
    if keys:
        _type(box, query)
    else:
        box.fill(query)
        box.press("End")
    try:
        page.wait_for_selector(ui.item, timeout=timeout_ms)
    except Exception:  # noqa: BLE001 - no result at all is an answer, not an error
        return [], float("nan")
    elapsed = time.perf_counter() - started
    if not keys and ui is MATERIAL:
        inpage = page.evaluate(
            "window.__hbFirst !== null && window.__hbKey !== null ? window.__hbFirst - window.__hbKey : null"
        )
        if inpage is not None:
            elapsed = inpage / 1000
    if keys:
        _settle(page, ui)
    return _results(page, ui), elapsed


def _settle(page, ui: SearchUI, quiet_ms: int = 400, timeout_ms: int = 10_000) -> None:
    """Wait until the result list has not changed for quiet_ms (every keystroke starts a search of its own)."""
    waited, last = 0, None
    while waited < timeout_ms:
        now = page.eval_on_selector_all(ui.link, "els => els.map(e => e.href).join()")
        if now == last:
            return
        last = now
        page.wait_for_timeout(quiet_ms)
        waited += quiet_ms


def _type(box, query: str) -> None:
    """Type as a reader does, one key event per character (Han characters arrive as text input, like an IME's)."""
    box.press_sequentially(query)


# On a freshly opened page, the page's own clock: the first and the last input in the search box, the first result
# item in the document, and each change to the result list with the links it then shows (the whole query's results
# are the first list, after the last key, that shows what the settled list shows).
_WATCH_TYPING = """
window.__hbFirstKey = null; window.__hbLastKey = null; window.__hbFirst = null; window.__hbLists = [];
document.addEventListener("input", (e) => {
  if (!(e.target.matches && e.target.matches(".md-search__input"))) return;
  const now = performance.now();
  if (window.__hbFirstKey === null) window.__hbFirstKey = now;
  window.__hbLastKey = now;
}, true);
const hbShown = () => [...document.querySelectorAll(".md-search-result__item > a.md-search-result__link")]
  .map((a) => a.href).join(" ");
new MutationObserver((records) => {
  if (window.__hbFirstKey === null) return;
  if (!records.some((r) => r.target.closest && r.target.closest(".md-search-result"))) return;
  const now = performance.now();
  if (window.__hbFirst === null && document.querySelector(".md-search-result__item")) window.__hbFirst = now;
  window.__hbLists.push([now, hbShown()]);
}).observe(document, { childList: true, subtree: true });
window.__hbFinal = () => {
  const settled = hbShown();
  const list = window.__hbLists.find(([at, shown]) => at >= window.__hbLastKey && shown === settled);
  return list ? list[0] : null;
};
"""


@dataclass(frozen=True)
class FreshSearch:
    """A query typed on a freshly opened page: its results, seconds from the first key to the first result (of
    whatever the reader had typed by then), seconds from the last key to the whole query's results, and seconds
    from the first key to the last (Playwright types a key every 20-40 ms: on the page's thread, where the offline
    copy searches in current Chromium, the browser handles the keys first and searches when they pause)."""

    results: list[str]
    first: float
    final: float
    typing: float = math.nan


def search_fresh(context, url: str, query: str, timeout_ms: int = 30_000) -> FreshSearch:
    """Open a page in a new tab and type the query at once, index loading included (what a reader who just opened
    the offline copy waits); the times come from the page's own clock where it has one (mkdocs-material)."""
    page = context.new_page()
    try:
        page.add_init_script(_WATCH_TYPING)
        page.goto(url)
        ui = search_ui(page)
        _focus_box(page, ui)
        box = page.locator(ui.box)
        started = time.perf_counter()
        _type(box, query)
        typed = time.perf_counter()
        try:
            page.wait_for_selector(ui.item, timeout=timeout_ms)
        except Exception:  # noqa: BLE001 - no result at all is an answer, not an error
            return FreshSearch([], math.nan, math.nan)
        first = time.perf_counter() - started
        _settle(page, ui)
        final = time.perf_counter() - typed  # an upper bound: _settle polls
        clock = page.evaluate("[window.__hbFirstKey, window.__hbLastKey, window.__hbFirst, window.__hbFinal()]")
        typing = math.nan
        if ui is MATERIAL and None not in clock:
            first_key, last_key, first_item, final_list = clock
            first = (first_item - first_key) / 1000
            final = (final_list - last_key) / 1000
            typing = (last_key - first_key) / 1000
        return FreshSearch(_results(page, ui), first, final, typing)
    finally:
        page.close()


def _results(page, ui: SearchUI = MATERIAL) -> list[str]:
    """Result pages in order, each once (Zensical lists a page's sections as results of their own)."""
    page.wait_for_timeout(150)  # let the result list settle after the first item
    hrefs = page.eval_on_selector_all(ui.link, "els => els.map(e => e.href)")
    return list(dict.fromkeys(_site_relative(h) for h in hrefs))


def _site_relative(href: str) -> str:
    path = href.split("?")[0].split("#")[0]
    for marker in ("://",):
        if marker in path:
            path = path.split(marker, 1)[1]
            path = path.split("/", 1)[1] if "/" in path else ""
    return path


def expected_pages(case: dict) -> list[str]:
    """A search-suite case names one page, or several of which any counts."""
    expect = case["expect"]
    return expect if isinstance(expect, list) else [expect]
