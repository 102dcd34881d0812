"""A page you can take away and run: its examples as one `.py` script and as a Jupyter notebook.

Both start with the `device` line (copyable.py) and hold the page's blocks in page order, as the verifier ran them
in one namespace: examples and checks. The notebook has the page's prose as Markdown cells and each example's
verified output as the cell's output (nbformat). What cannot run everywhere is made safe, never silently dropped:
a block that must raise (`raises=`) is wrapped so the script goes on and prints the error as the page shows it; a
CUDA-only block runs only when a GPU is present; a `skip=` block is left in as comments with its reason.
"""

from __future__ import annotations

import json
import textwrap

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from handbook.site import copyable
from handbook.verify.document import Example, Page

HEADER = '"""{title}: the examples of the PyTorch API Handbook page, in page order.\n\n{url}\n"""'


def _code(ex: Example) -> list[str]:
    """The block's code as the download runs it."""
    code = ex.code.rstrip("\n")
    if ex.options.skip:
        return [f"# not run on the page ({ex.options.skip}):", *(f"# {line}" for line in code.split("\n"))]
    if ex.options.raises:
        name = ex.options.raises.rsplit(".", 1)[-1]
        body = textwrap.indent(code, "    ")
        code = (
            f"try:  # this example fails on purpose\n{body}\n"
            f'except {name} as error:\n    print(f"{{type(error).__name__}}: {{error}}")'
        )
        if "." in ex.options.raises:  # a qualified class: name it through its module
            module = ex.options.raises.rsplit(".", 1)[0]
            code = f"from {module} import {name}\n{code}"
    if ex.options.devices == ("cuda",):
        code = f"if torch.cuda.is_available():  # this example needs a GPU\n{textwrap.indent(code, '    ')}"
    return code.split("\n")


def setup() -> list[str]:
    return ["import torch", "", copyable.DEVICE_LINES[("cpu", "cuda")]]


def script(page: Page, title: str, url: str) -> str:
    parts = [HEADER.format(title=title, url=url), "", *setup()]
    for ex in page.examples:
        kind = "check" if ex.is_check else "example"
        parts += ["", "", f"# {kind} at line {ex.line} of the page", *_code(ex)]
    return "\n".join(parts) + "\n"


def _prose(page: Page) -> list[tuple[int, str]]:
    """(line, Markdown) of the page's prose between its blocks (front matter and code left out)."""
    lines = page.text.split("\n")
    taken = set()
    for ex in page.examples:
        taken.update(range(ex.line - 1, ex.end_line))
        for out in (ex.output, ex.cuda_output):
            if out is not None:
                taken.update(range(out.line - 1, out.end_line))
    start = next((i for i, line in enumerate(lines) if line.startswith("# ")), 0)
    chunks, current, first = [], [], None
    for i in range(start, len(lines)):
        if i in taken:
            if any(x.strip() for x in current):
                chunks.append((first, "\n".join(current).strip("\n")))
            current, first = [], None
            continue
        if first is None:
            first = i + 1
        current.append(lines[i])
    if any(x.strip() for x in current):
        chunks.append((first, "\n".join(current).strip("\n")))
    return chunks


def notebook(page: Page, title: str, url: str) -> str:
    cells: list[tuple[int, object]] = [(0, new_markdown_cell(f"# {title}\n\nFrom the PyTorch API Handbook: {url}"))]
    cells.append((0, new_code_cell("\n".join(setup()))))
    cells += [(line, new_markdown_cell(text)) for line, text in _prose(page)]
    for ex in page.examples:
        cell = new_code_cell("\n".join(_code(ex)))
        text = ex.output.text if ex.output is not None and not ex.options.nondeterministic else ""
        if text:
            cell.outputs = [new_output("stream", name="stdout", text=text)]
        cells.append((ex.line, cell))
    nb = new_notebook(cells=[c for _, c in sorted(cells, key=lambda x: x[0])])
    for i, cell in enumerate(nb.cells):  # nbformat draws random ids: number them, so a rebuild is identical
        cell.id = f"cell-{i}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb)  # validated by the tests (nbformat.validate is slow: not on every build)


def blocks_json(page: Page) -> str:
    """Each example's code, in page order, for the "copy with setup" button: the setup and the blocks before it."""
    data = [
        {"line": ex.line, "code": "\n".join(_code(ex)), "setup": not (ex.options.raises or ex.options.skip)}
        for ex in page.examples
    ]
    return json.dumps({"setup": "\n".join(setup()), "blocks": data}, ensure_ascii=False).replace("</", "<\\/")
