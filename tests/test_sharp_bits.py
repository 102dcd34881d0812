from handbook.site import sharp_bits
from handbook.site.nav import load_pages
from handbook.verify.document import parse_page

CAT = """---
kind: api
api: torch.cat
summary: s
tags: [high-frequency]
---

# torch.cat

## Official definition

**Not a pitfall.** Bold text outside the pitfalls section.

## Parameters

## Examples

## Common pitfalls

**Sizes must match except in `dim`.** The message names the tensor.

```python raises=RuntimeError
x = 1
**not a lead** = 2
```

Text between pitfalls, then a lead with a link:

**Scalars need [torch.stack](stack.md).** More text.

## Performance tips

**Call it once.** Not a pitfall either.
"""

LINEAR = CAT.replace("torch.cat", "torch.nn.Linear").replace(
    "## Common pitfalls\n", "## Common pitfalls\n\n**Input must be float.** Text.\n", 1
)
RARE = CAT.replace("torch.cat", "torch.narrow").replace("[high-frequency]", "[shape-ops]")
GUIDE = "---\nkind: guide\nsummary: s\ntags: [high-frequency]\n---\n\n# G\n\n## Common pitfalls\n\n**Lead.** x\n"


def write_docs(tmp_path):
    docs = tmp_path / "docs"
    for rel, text in [
        ("torch/cat.md", CAT),
        ("torch/nn/linear.md", LINEAR),
        ("torch/narrow.md", RARE),
        ("guides/g.md", GUIDE),
    ]:
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    return docs


def test_pitfalls_are_the_bold_leads_of_the_pitfalls_section_only(tmp_path):
    page = parse_page(write_docs(tmp_path) / "torch/cat.md")
    assert sharp_bits.pitfalls(page) == ["Sizes must match except in `dim`.", "Scalars need torch.stack."]


def test_only_high_frequency_api_pages_are_gathered_grouped_by_module(tmp_path):
    docs = write_docs(tmp_path)
    text = sharp_bits.markdown(load_pages(docs), "guides", docs)
    assert "narrow" not in text and "Lead." not in text
    torch_part, nn_part = text.split("## torch.nn\n")
    assert "## torch\n" in torch_part
    assert (
        "- **[`torch.cat`](../torch/cat.md#common-pitfalls)**\n"
        "    - Sizes must match except in `dim`.\n"
        "    - Scalars need torch.stack.\n"
    ) in torch_part
    assert "- **[`torch.nn.Linear`](../torch/nn/linear.md#common-pitfalls)**\n    - Input must be float.\n" in nn_part
    assert text.startswith("5 pitfalls from 2 pages.")


def test_fill_replaces_the_marker_and_leaves_other_pages_alone(tmp_path):
    docs = write_docs(tmp_path)
    pages = load_pages(docs)
    filled = sharp_bits.fill(f"# Sharp bits\n\n{sharp_bits.MARKER}\n", pages, "guides", docs)
    assert sharp_bits.MARKER not in filled
    assert "(../torch/cat.md#common-pitfalls)" in filled
    assert sharp_bits.fill("# Other\n", pages, "guides", docs) == "# Other\n"


def test_the_real_sharp_bits_page_holds_the_marker_and_gathers_real_pitfalls():
    pages = load_pages()
    source = next(p for p in pages if p.rel == "docs/guides/sharp-bits.md")
    assert sharp_bits.MARKER in source.text
    text = sharp_bits.markdown(pages)
    assert "(../torch/cat.md#common-pitfalls)**\n    - Sizes must match in every dimension except `dim`." in text
    # torch.tensor's page has its own URL since the torch.Tensor index moved to torch/tensor-methods/
    assert "(../torch/tensor.md#common-pitfalls)**" in text
