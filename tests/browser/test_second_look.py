"""The reader's second look (issue 27) and the Chinese edition (issue 28), in headless Chromium: phone-width
history strip and signatures, the status page's summary and filters, take-away downloads, pinned upstream links,
the language switch, and a Chinese page showing exactly the English page's verified blocks."""

from handbook.bench.browser import serve

PHONE = {"width": 390, "height": 844}


def _no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1")


def test_version_history_and_signature_fit_a_phone(built_site, browser, screenshot):
    with serve(built_site) as base:
        page = browser.new_page(viewport=PHONE)
        page.goto(base + "torch/nn/conv2d/")
        strip = page.locator(".hb-strip")
        box = strip.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        # the signature is wrapped one parameter per line: no line of it is wider than its box
        signature = page.locator("article .highlight").first
        assert any(line.startswith("    in_channels") for line in signature.inner_text().split("\n"))  # own line
        assert page.evaluate("el => el.scrollWidth <= el.clientWidth + 1", signature.locator("pre").element_handle())
        assert _no_horizontal_scroll(page)
        screenshot(page, "phone-conv2d-history")


def test_status_page_shows_a_summary_then_filters_its_table(built_site, browser):
    with serve(built_site) as base:
        page = browser.new_page()
        page.goto(base + "verification/")
        text = page.locator("article").inner_text()
        assert "Summary" in text and "examples run" in text and "Not run:" in text
        assert "Coverage of real usage" in text and "Claims audit" in text
        page.wait_for_selector(".hb-filter:not([hidden]) select")
        rows = page.locator("article table").last.locator("tbody tr")
        total = rows.count()
        assert total > 300
        module = page.locator(".hb-filter select").first
        module.select_option("torch.nn")
        shown = rows.evaluate_all("rows => rows.filter(r => !r.hidden).length")
        assert 0 < shown < total
        assert page.locator(".hb-filter span").inner_text() == f"{shown} of {total} pages"


def test_pages_offer_their_examples_as_a_script_and_a_notebook(built_site, browser):
    import json
    import urllib.request

    with serve(built_site) as base:
        page = browser.new_page()
        page.goto(base + "comparisons/cat-vs-stack/")
        links = page.locator(".hb-downloads a")
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert any(h.endswith("cat-vs-stack.py") for h in hrefs) and any(h.endswith(".ipynb") for h in hrefs)
        script = urllib.request.urlopen(base + "comparisons/cat-vs-stack.py").read().decode()
        assert script.startswith('"""') and "import torch" in script
        nb = json.loads(urllib.request.urlopen(base + "comparisons/cat-vs-stack.ipynb").read())
        assert nb["nbformat"] == 4 and any(c["cell_type"] == "code" for c in nb["cells"])
        # every example but the first has a "copy with setup" button holding the setup and the blocks before it
        buttons = page.locator(".hb-copy-setup")
        assert buttons.count() >= 3
        third = buttons.nth(2).get_attribute("data-clipboard-text")
        assert third.startswith("import torch") and "device = torch.device" in third


def test_upstream_links_name_the_pinned_release(built_site, browser):
    from handbook.verify.record import environment

    release = ".".join(environment()["torch"].split("+")[0].split(".")[:2])
    with serve(built_site) as base:
        page = browser.new_page()
        page.goto(base + "torch/cat/")
        link = page.get_by_role("link", name="torch.cat", exact=True).last.get_attribute("href")
        assert link == f"https://docs.pytorch.org/docs/{release}/generated/torch.cat.html"


def test_the_language_switch_lands_on_the_same_page_and_the_chinese_page_shows_the_same_blocks(
    built_site, browser, screenshot
):
    with serve(built_site) as base:
        page = browser.new_page()
        page.goto(base + "torch/cat/")
        english_blocks = page.eval_on_selector_all("article pre code", "els => els.map(e => e.textContent)")
        href = page.locator('a.md-select__link[hreflang="zh"]').first.get_attribute("href")
        page.goto(base + "torch/cat/" + href if not href.startswith("http") else href)
        assert page.url.rstrip("/").endswith("zh/torch/cat")
        assert page.evaluate("document.documentElement.lang") == "zh"
        assert page.locator(".hb-tldr-label").inner_text() == "摘要"
        h2 = page.eval_on_selector_all("article h2", "els => els.map(e => e.textContent.replace('¶', '').trim())")
        assert h2[:5] == ["官方定义", "参数", "示例", "常见陷阱", "性能建议"]
        chinese_blocks = page.eval_on_selector_all("article pre code", "els => els.map(e => e.textContent)")
        # the verified examples (code and outputs) are the English page's, block for block
        assert [b for b in english_blocks if "torch.cat" in b] == [b for b in chinese_blocks if "torch.cat" in b]
        assert len(english_blocks) == len(chinese_blocks), (len(english_blocks), len(chinese_blocks))
        back = page.locator('a.md-select__link[hreflang="en"]').first.get_attribute("href")
        page.goto(page.url + back if not back.startswith("http") else back)
        assert page.url.rstrip("/").endswith("/torch/cat") and "/zh/" not in page.url
        screenshot(page, "language-switch")


def test_the_offline_copy_carries_both_languages(offline_site, browser):
    zh = offline_site / "zh" / "torch" / "cat.html"
    assert zh.exists()
    page = browser.new_page()
    page.goto(zh.as_uri())
    assert page.evaluate("document.documentElement.lang") == "zh"
    href = page.locator('a.md-select__link[hreflang="en"]').first.get_attribute("href")
    page.goto((zh.parent / href).resolve().as_uri())
    assert page.url.endswith("/torch/cat.html") and "/zh/" not in page.url
