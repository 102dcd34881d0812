"""The device line shown to readers, the TL;DR, math for arithmatex, the home page's generated parts."""

import pytest

from handbook.site import copyable, official, render


@pytest.mark.parametrize(
    ("code", "needs"),
    [
        ("import torch\nx = torch.ones(2, device=device)\n", True),
        ("def f():\n    return device\n", True),  # read from a function: still the page's global
        ("import torch\ndevice = torch.device('cpu')\nx = torch.ones(2, device=device)\n", False),
        ("def f(device):\n    return device\n", False),  # a parameter, not the global
        ("import torch\nprint(torch.device('cpu'))\nprint(x.device)\n", False),  # attributes and calls
        ("x = dict(device=1)\n", False),  # a keyword
        ("this is not python", False),
    ],
)
def test_reads_undefined_device(code, needs):
    assert copyable.reads_undefined_device(code) is needs


def test_setup_goes_after_the_imports_and_imports_torch_when_needed():
    skip, lines = copyable.setup_lines("import torch\nimport torch.nn as nn\nx = 1\n", ("cpu", "cuda"))
    assert skip == 2 and lines == [copyable.DEVICE_LINES["cpu", "cuda"]]
    skip, lines = copyable.setup_lines("from torch import nn\nx = 1\n", ("cpu",))
    assert skip == 1 and lines == [
        "import torch",
        'device = torch.device("cpu")  # this example is verified on CPU only',
    ]


PAGE = """---
kind: guide
summary: A <b>bold</b> summary with `code`.
tags: []
---

# A page

```python
import torch
print(torch.ones(1))
```

```python
import torch
x = torch.ones(1, device=device)
```

```python
y = torch.ones(1, device=device)
```
"""


def test_render_shows_the_device_line_once_and_the_tldr(tmp_path):
    path = tmp_path / "page.md"
    path.write_text(PAGE, encoding="utf-8")
    out = render.render(PAGE, path, {})
    assert out.count("device = torch.device(") == 1
    lines = out.split("\n")
    first_use = lines.index("x = torch.ones(1, device=device)")
    assert lines[first_use - 1] == copyable.DEVICE_LINES["cpu", "cuda"] and lines[first_use - 2] == "import torch"
    assert '<p class="hb-tldr" markdown="span"><span class="hb-tldr-label">TL;DR</span> A &lt;b&gt;bold' in out


def test_math_becomes_arithmatex_delimiters():
    text = official.rst_to_markdown(
        "If :math:`x <\n    y` then.\n\n.. math::\n    a = b\n\nArgs:\n    p (int): the :math:`|p|` norm"
    )
    assert "\\(x < y\\)" in text and ":math:" not in text
    assert "\\[\na = b\n\\]" in text
    assert "\\(\\vert p\\vert \\)" in text  # a table cell: '|' would end the cell


def test_home_counts_come_from_the_record(tmp_path):
    from handbook.site import home
    from handbook.verify.document import parse_page

    path = tmp_path / "page.md"
    path.write_text(PAGE, encoding="utf-8")
    page = parse_page(path)
    entry = {"hash": page.examples_hash, "outcome": "passed", "torch": "2.15.0", "date": "2026-12-02"}
    record = {"pages": {page.rel: {"cpu": {"AMD EPYC (AVX512)": entry}}}}
    counts = home.verification_counts([page], record)
    assert counts["pages"] == 1 and counts["examples"] == 3
    assert counts["cpu"] == {"verified": 1} and counts["cuda"] == {"unverified": 1}
    stale = {"pages": {page.rel: {"cpu": {"AMD EPYC (AVX512)": {**entry, "hash": "other"}}}}}
    assert home.verification_counts([page], stale)["cpu"] == {"stale": 1}
    assert "AMD EPYC (AVX512) (CPU)" in "\n".join(home.verification_summary([page], record))
    with pytest.raises(ValueError, match="unknown home-page marker"):
        home.expand("<!-- home: nope -->", None, [], {}, False)
