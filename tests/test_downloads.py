"""A page's examples as a runnable .py and a Jupyter notebook: they run in a fresh Python and print what the page
shows (the verified outputs), for a sample of real pages."""

import json
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from handbook import DOCS
from handbook.site import downloads
from handbook.verify.compare import matches
from handbook.verify.document import parse_page

# one of each: a comparison with blocks that build on each other, a page with raises= pitfalls and checks, a guide
SAMPLE = ["comparisons/cat-vs-stack.md", "torch/multinomial.md", "torch/unsqueeze.md"]


def _compared(page):
    """(example, expected output) for the blocks whose output the verifier compares."""
    return [
        (ex, ex.output.text)
        for ex in page.examples
        if ex.output is not None and not ex.options.nondeterministic and ex.options.devices != ("cuda",)
    ]


@pytest.mark.parametrize("rel", SAMPLE)
def test_the_script_runs_in_a_fresh_python_and_prints_the_verified_outputs(rel, tmp_path):
    page = parse_page(DOCS / rel)
    script = tmp_path / "page.py"
    script.write_text(downloads.script(page, rel, "https://example/"))
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for ex, expected in _compared(page):
        # each verified output appears, in order (the floats within the verifier's one-unit rule)
        lines = expected.strip().split("\n")
        found = [
            i
            for i in range(len(out.split("\n")))
            if matches("\n".join(lines), "\n".join(out.split("\n")[i : i + len(lines)]))
        ]
        assert found, f"{ex.name}: {expected!r} not printed by the script"


@pytest.mark.parametrize("rel", SAMPLE[:2])
def test_the_notebook_runs_with_nbclient_and_keeps_the_verified_outputs(rel, tmp_path):
    page = parse_page(DOCS / rel)
    nb = nbformat.reads(downloads.notebook(page, rel, "https://example/"), as_version=4)
    nbformat.validate(nb)
    shown = {c.source: "".join(o.get("text", "") for o in c.outputs) for c in nb.cells if c.cell_type == "code"}
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    for cell in nb.cells:
        if cell.cell_type != "code" or not shown.get(cell.source):
            continue
        printed = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
        assert matches(shown[cell.source], printed), (cell.source[:200], shown[cell.source], printed)


def test_what_cannot_run_everywhere_is_made_safe_not_dropped(tmp_path):
    path = tmp_path / "p.md"
    path.write_text(
        "---\nkind: guide\n---\n\n# p\n\n```python raises=ZeroDivisionError\n1 / 0\n```\n\n```output\n"
        "ZeroDivisionError: division by zero\n```\n\n```python devices=cuda\nprint(torch.ones(1, device='cuda'))\n```\n\n"
        '```python skip="needs a file"\nopen("x")\n```\n\n```check\nassert 1 + 1 == 2\n```\n'
    )
    page = parse_page(path)
    text = downloads.script(page, "p", "u")
    assert "try:  # this example fails on purpose" in text and "if torch.cuda.is_available():" in text
    assert '# open("x")' in text and "assert 1 + 1 == 2" in text
    script = tmp_path / "p.py"
    script.write_text(text)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""})  # fmt: skip
    assert done.returncode == 0 and done.stdout == "ZeroDivisionError: division by zero\n", done.stderr
    blocks = json.loads(downloads.blocks_json(page))
    assert [b["setup"] for b in blocks["blocks"]] == [False, True, False, True]
    assert blocks["setup"].startswith("import torch")


def test_a_notebook_is_the_same_on_every_build():
    page = parse_page(DOCS / "torch" / "cat.md")
    first = downloads.notebook(page, "torch.cat", "https://example.invalid/")
    assert first == downloads.notebook(parse_page(DOCS / "torch" / "cat.md"), "torch.cat", "https://example.invalid/")
    assert [c.id for c in nbformat.reads(first, 4).cells][:2] == ["cell-0", "cell-1"]
