"""Math typeset at build time by the vendored KaTeX (site/math.py)."""

import pytest

from handbook.site import math


def test_inline_and_display_math_become_katex_html(tmp_path):
    page = tmp_path / "p" / "index.html"
    page.parent.mkdir()
    page.write_text(
        '<p>a <span class="arithmatex">\\(x_i &lt; \\frac{1}{2}\\)</span> b</p>\n'
        '<div class="arithmatex">\\[\n\\sum_j \\exp(x_j)\n\\]</div>\n',
        encoding="utf-8",
    )
    assert math.prerender(tmp_path) == 2
    out = page.read_text(encoding="utf-8")
    assert out.count('class="katex-display"') == 1 and out.count('class="katex"') == 2  # display wraps inline
    assert "\\(" not in out and "\\[" not in out
    assert '<annotation encoding="application/x-tex">x_i &lt; \\frac{1}{2}</annotation>' in out


def test_math_left_untypeset_is_an_error_naming_the_page(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<span class="arithmatex">\\(x</span> <span class="arithmatex">\\(y\\)</span>', encoding="utf-8")
    with pytest.raises(math.MathError, match="broken.html: an arithmatex element was left untypeset"):
        math.prerender(tmp_path)


def test_a_site_without_math_is_left_alone(tmp_path):
    (tmp_path / "index.html").write_text("<p>no formulas, $5 and \\(text\\) in prose</p>", encoding="utf-8")
    assert math.prerender(tmp_path) == 0
    assert (tmp_path / "index.html").read_text(encoding="utf-8") == "<p>no formulas, $5 and \\(text\\) in prose</p>"


def test_a_page_whose_only_math_is_malformed_is_an_error_not_a_skip(tmp_path):
    (tmp_path / "only.html").write_text('<span class="arithmatex">\\(x</span>', encoding="utf-8")
    with pytest.raises(math.MathError, match="only.html: an arithmatex element was left untypeset"):
        math.prerender(tmp_path)
