"""The Chinese edition: prose units tracked in PO files, out-of-date paragraphs shown in English with a note,
code and outputs single-sourced, the glossary, and every string the render step writes translated."""

import ast
import re
import shutil
from pathlib import Path

import polib

from handbook import ROOT
from handbook.i18n import catalog, cli, glossary, strings
from handbook.i18n.translate import anchor, translate
from handbook.lint.rules import lint_page
from handbook.verify.document import parse_page

PAGE = """---
kind: api
api: torch.cat
category: indexing-joining
summary: Join tensors along an existing dimension.
tags: []
---

# torch.cat

## Official definition

Concatenates the given tensors along a dimension.
All of them need the same shape but in that dimension.

## Parameters

- `dim` (int, default `0`) — the dimension to join along.

  ```check
  import torch
  assert torch.cat([torch.zeros(1, 2), torch.zeros(1, 2)], dim=1).shape == (1, 4)
  ```

## Examples

### Joining rows

```python
import torch
print(torch.cat([torch.zeros(1), torch.ones(1)]))
```

```output
tensor([0., 1.])
```

| a | b |
|---|---|
| one | two |
"""


def _page(tmp_path, text=PAGE):
    (tmp_path / "i18n").mkdir(exist_ok=True)
    path = tmp_path / "docs" / "torch" / "cat.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return parse_page(path)


def _translate_all(page, language="zh"):
    po, _ = catalog.update(page, language)
    for entry in po:
        entry.msgstr = "译：" + entry.msgid.replace("`dim`", "`dim`")
    path = catalog.po_path(page, language)
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    return po


def test_units_are_prose_only_and_fixed_headings_stay_with_the_render_step(tmp_path):
    page = _page(tmp_path)
    found = [(u.kind, u.text) for u in catalog.units(page)]
    assert ("summary", "Join tensors along an existing dimension.") in found
    assert (
        "paragraph",
        "Concatenates the given tensors along a dimension.\nAll of them need the same shape but in that dimension.",
    ) in found
    assert ("paragraph", "`dim` (int, default `0`) — the dimension to join along.") in found  # marker left out
    assert ("heading", "Joining rows") in found and ("row", "| one | two |") in found
    texts = "\n".join(t for _, t in found)
    assert "torch.zeros" not in texts and "tensor([0., 1.])" not in texts  # code, outputs, checks never translate
    assert "Official definition" not in texts and "torch.cat" != found[1][1]  # fixed H2s and the api H1
    assert catalog.po_path(page, "zh") == tmp_path / "i18n" / "zh" / "torch" / "cat.po"


def test_a_translated_page_has_exactly_the_english_pages_blocks(tmp_path):
    page = _page(tmp_path)
    _translate_all(page)
    out = translate(page, "zh")
    assert out.status.complete and "译：Concatenates" in out.text
    assert "- 译：`dim` (int" in out.text  # the list marker kept
    assert "### 译：Joining rows {#joining-rows}" in out.text  # the English anchor kept
    again = parse_page(page.path, out.text)
    assert again.examples_hash == page.examples_hash  # same code, options, outputs: verified once, shown twice
    assert [e.code for e in again.examples] == [e.code for e in page.examples]


def test_a_changed_english_paragraph_shows_in_english_with_a_note_lint_and_status_report_it(tmp_path, capsys):
    page = _page(tmp_path)
    _translate_all(page)
    changed = _page(tmp_path, PAGE.replace("along a dimension.", "along an existing dimension."))
    out = translate(changed, "zh")
    assert "Concatenates the given tensors along an existing dimension." in out.text  # the current English
    assert "译：Concatenates" not in out.text  # never the stale Chinese, silently
    assert '<p class="hb-i18n-outdated">' in out.text and "1 段译文已过时" in out.text
    assert [f.code for f in lint_page(changed)].count("HB120") == 1
    assert cli.status([str(changed.path)], "zh") == 1
    assert f"{changed.rel}:13: HB120" in capsys.readouterr().out
    # update marks it fuzzy, keeping the old translation and the English it was made from
    po, counts = catalog.update(changed, "zh")
    assert counts == {"kept": 5, "new": 0, "fuzzy": 1, "obsolete": 0}
    (fuzzy,) = [e for e in po if "fuzzy" in e.flags]
    assert fuzzy.previous_msgid.endswith("along a dimension.\nAll of them need the same shape but in that dimension.")


def test_glossary_flags_an_avoided_rendering():
    assert glossary.misused("Use a stride of 2.", "步长为 2。") == [("stride", "步幅", "步长")]
    assert glossary.misused("Use a stride of 2.", "步幅为 2。") == []
    assert glossary.misused("It concatenates them.", "把它们串联起来。")[0][2] == "串联"
    # 维数 is avoided for "dimension", but 二维数据 ("2-D data") only contains it
    assert glossary.misused("2-D data has two dimensions.", "二维数据有两个维度。") == []
    assert glossary.misused("2-D data has two dimensions.", "二维数据的维数是 2。")[0][2] == "维数"
    assert all(e["zh"] not in e.get("avoid", []) for e in glossary.load())


def test_anchor_is_the_english_headings_id():
    assert anchor("Why `torch.cat` needs [same](x.md) shapes") == "why-torchcat-needs-same-shapes"
    assert anchor("Rules {#rules}") == "rules"


def test_every_string_the_render_step_writes_has_a_chinese_translation():
    used = set()
    for path in (ROOT / "scripts" / "handbook").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t" and node.args:
                first = node.args[0]
                candidates = [first] if isinstance(first, ast.Constant) else []
                if isinstance(first, ast.IfExp):  # t("a" if x else "b")
                    candidates = [first.body, first.orelse]
                if isinstance(first, ast.Subscript) and isinstance(first.value, ast.Dict):  # t({...}[state])
                    candidates = list(first.value.values)
                used.update(c.value for c in candidates if isinstance(c, ast.Constant) and isinstance(c.value, str))
    missing = sorted(s for s in used if s not in strings.ZH)
    assert not missing, missing
    with strings.language("zh"):
        assert strings.t("Verified on {label}", label="CPU") == "已在 CPU 上验证"
    assert strings.t("Verified on {label}", label="CPU") == "Verified on CPU"


def test_the_committed_catalogs_are_valid_po_files():
    for path in (ROOT / "i18n").rglob("*.po"):
        po = polib.pofile(str(path))
        assert po.metadata.get("Language") == path.relative_to(ROOT / "i18n").parts[0], path


def test_render_writes_both_languages(tmp_path):
    """A Chinese page's examples and outputs are the English page's (fixture page, no translation yet)."""
    from handbook.site import build

    docs = tmp_path / "docs"
    shutil.copytree(Path(__file__).parent / "fixtures" / "site" / "docs", docs)
    build.write(tmp_path / "build", docs)
    en = (tmp_path / "build" / "docs" / "torch" / "tabs.md").read_text()
    zh = (tmp_path / "build" / "docs-zh" / "torch" / "tabs.md").read_text()
    code = lambda text: [b for b in re.findall(r"```python[^\n]*\n(.*?)```", text, re.S)]  # noqa: E731
    assert code(en) == code(zh) and code(en)
    assert "输出" in zh and "Output" in en  # the render step's own words, in each language
    assert (tmp_path / "build" / "mkdocs-zh.yml").exists()


def test_the_chinese_home_page_links_the_one_zip_at_the_site_root():
    from handbook.site import home

    assert 'href="download/pytorch-handbook-offline.zip"' in home.download(False)[0]
    with strings.language("zh"):  # zh/index.html: the zip is one folder up
        assert 'href="../download/pytorch-handbook-offline.zip"' in home.download(False)[0]
