from handbook.site import render

PAGE = """---
kind: api
api: torch.cat
summary: s
tags: [math]
---

# torch.cat

## Official definition

Prose.

```python raises=RuntimeError
boom()
```

```output
RuntimeError: x
```

```python
print(1)
```

```output
1
```

```output cuda
2
```
"""


def test_render_strips_front_matter_and_options_adds_signature_and_tabs(tmp_path):
    path = tmp_path / "cat.md"
    path.write_text(PAGE)
    out = render.render(PAGE, path, {"pages": {}})
    assert not out.startswith("---") and "kind: api" not in out
    assert "cat(tensors, dim=0, *, out=None) -> Tensor" in out  # from the installed torch
    assert '```python title="raises RuntimeError"' in out and "raises=RuntimeError" not in out
    assert '=== "CPU"' in out and '=== "CUDA"' in out
    assert "CPU: not yet verified" in out and "CUDA: not yet verified" in out


def test_each_pitfall_becomes_a_warning_admonition(tmp_path):
    page = PAGE.replace(
        "## Official definition", "## Official definition\n\n## Common pitfalls\n\nIntro.\n\n**First.** Text."
    )
    page = page.replace("```python\nprint(1)", "**Second.** More.\n\n```python\nprint(1)")
    path = tmp_path / "cat.md"
    path.write_text(page)
    out = render.render(page, path, {"pages": {}})
    assert out.count('!!! warning "Pitfall"') == 2
    assert "\nIntro.\n" in out  # text before the first pitfall stays outside
    assert "    **Second.** More." in out and "    ```python\n    print(1)" in out


def test_missing_jieba_fails_the_build(monkeypatch, tmp_path):
    import sys

    import pytest
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError

    from handbook.site import mkdocs_hooks

    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: x\n")
    (tmp_path / "docs").mkdir()
    monkeypatch.setitem(sys.modules, "jieba", None)  # makes `import jieba` raise ImportError
    with pytest.raises(PluginError, match="jieba is not installed"):
        mkdocs_hooks.on_config(load_config(str(config)))


def test_adapter_refuses_a_configuration_the_render_step_did_not_write(tmp_path):
    import pytest
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError

    from handbook.site import mkdocs_hooks

    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: x\n")
    (tmp_path / "docs").mkdir()
    with pytest.raises(PluginError, match=r"search-data.json not found.*python -m handbook render"):
        mkdocs_hooks.on_config(load_config(str(config)))


def test_blocks_under_a_two_space_bullet_stay_in_the_list_as_python_markdown_reads_it():
    """A check after a continuation paragraph of a "- " item used to render as literal text (the item's blocks
    were at 2 spaces; Python-Markdown wants 4)."""
    import markdown

    from handbook.site.render import four_space_lists

    page = [
        "- `weight` (Tensor) — per-class weights.",
        "",
        "  With index targets the dtype must match.",
        "",
        '  ??? success "Checked"',
        "",
        "      ```python",
        "      assert True",
        "      ```",
        "1. third form",
        "   ```python",
        "   x = 1",
        "   ```",
        "",
        "After the list.",
    ]
    extensions = ["pymdownx.details", "pymdownx.superfences", "admonition"]
    assert "```" in markdown.markdown("\n".join(page), extensions=extensions)  # the failure this prevents
    html = markdown.markdown("\n".join(four_space_lists(page)), extensions=extensions)
    assert "```" not in html and "<details" in html and html.count("<li>") == 2
    assert html.rstrip().endswith("<p>After the list.</p>")


def test_an_output_holding_a_fence_renders_as_one_block(tmp_path):
    from markdown_it import MarkdownIt

    from handbook.verify.fences import fence_for

    assert fence_for("a ``` b") == "````" and fence_for("x\n````\ny") == "`````" and fence_for("plain") == "```"
    inner = "`````\n````\n```"  # runs of 5, 4 and 3 backticks inside an output
    page = PAGE.replace("```output\n1\n```", "`````` output\n" + inner + "\n``````").replace(
        "```output cuda\n2\n```", ""
    )
    path = tmp_path / "cat.md"
    path.write_text(page)
    out = render.render(page, path, {"pages": {}})
    fences = [tok for tok in MarkdownIt().parse(out) if tok.type == "fence" and tok.content.startswith("`````")]
    assert [tok.content for tok in fences] == [inner + "\n"]


def test_head_hreflang_links_are_left_out_without_a_site_url():
    from types import SimpleNamespace

    from handbook.site.mkdocs_hooks import on_post_page

    head = '<head>\n    <link rel="alternate" href="../.." hreflang="en">\n    <link rel="alternate" href="../../zh/" hreflang="zh">\n</head><a hreflang="zh" href="../zh/">中文</a>'
    out = on_post_page(head, None, SimpleNamespace(site_url=None))
    assert '<link rel="alternate"' not in out and '<a hreflang="zh" href="../zh/">' in out  # the switch stays
    assert on_post_page(head, None, SimpleNamespace(site_url="https://example.org/")) == head
