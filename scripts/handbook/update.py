"""`verify --update`: rewrite expected-output blocks from real runs. Code and prose are never touched."""

from __future__ import annotations

from .compare import matches, matches_on_cuda, normalize
from .document import Example

KEEP = object()  # leave this block as it is


def _fence_for(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


def _block_lines(indent: str, label: str, text: str) -> list[str]:
    body = normalize(text)
    fence = _fence_for(body)
    head = f"{indent}{fence}output" + (f" {label}" if label else "")
    lines = [f"{indent}{line}" if line else "" for line in body.split("\n")]
    return [head, *lines, f"{indent}{fence}"]


def plan(example: Example, actual: dict[str, str]) -> tuple[object, object]:
    """New text for the shared and the CUDA block (KEEP, a string, or '' to remove), from actual outputs."""
    shared, cuda = KEEP, KEEP
    current = example.output.text if example.output else ""
    if "cpu" in actual:
        if not matches(current, actual["cpu"]):
            shared = actual["cpu"]
    elif "cuda" in actual and example.options.devices == ("cuda",):
        # A CUDA-only example: its shared block is its CUDA output.
        if not matches_on_cuda(current, actual["cuda"]):
            shared = actual["cuda"]
        return shared, ("" if example.cuda_output is not None else KEEP)
    if "cuda" in actual:
        base = current if shared is KEEP else shared
        if matches_on_cuda(base, actual["cuda"]):
            cuda = "" if example.cuda_output is not None else KEEP
        elif example.cuda_output is None or not matches(example.cuda_output.text, actual["cuda"]):
            cuda = actual["cuda"]
    return shared, cuda


def rewrite(text: str, examples: list[Example], plans: dict[int, tuple[object, object]]) -> tuple[str, list[str]]:
    """Apply plans bottom-up; return the new text and one line per change."""
    lines = text.split("\n")
    changes: list[str] = []
    edits: list[tuple[int, int, list[str]]] = []  # (start index, end index exclusive, replacement)
    for i, (shared, cuda) in plans.items():
        ex = examples[i]
        anchor = ex.end_line  # 0-based index just after the python block's closing fence
        for block, new, label in ((ex.output, shared, ""), (ex.cuda_output, cuda, "cuda")):
            what = "CUDA output" if label else "output"
            if new is KEEP:
                if block is not None:
                    anchor = block.end_line
                continue
            if block is not None and normalize(new):
                edits.append((block.line - 1, block.end_line, _block_lines(ex.indent, label, new)))
                anchor = block.end_line
                changes.append(f"{ex.name}: rewrote {what}")
            elif block is not None:
                start = block.line - 1
                if start > 0 and not lines[start - 1].strip():
                    start -= 1
                edits.append((start, block.end_line, []))
                changes.append(f"{ex.name}: removed {what}")
            elif normalize(new):
                edits.append((anchor, anchor, ["", *_block_lines(ex.indent, label, new)]))
                changes.append(f"{ex.name}: added {what}")
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[start:end] = replacement
    return "\n".join(lines), changes
