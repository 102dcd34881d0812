"""`verify --update`: rewrite expected-output blocks from real runs. Code and prose are never touched."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from handbook.verify import record
from handbook.verify.compare import matches, matches_on_cuda, normalize
from handbook.verify.document import Example, Page
from handbook.verify.fences import OutputHeader, fence_for
from handbook.verify.paths import UnsafePath

BLOCK_LIMIT = 64 * 1024  # bytes of captured output --update writes into one block, at most

KEEP = object()  # leave this block as it is
REMOVE = object()  # delete this block


@dataclass(frozen=True)
class NewBlock:
    text: str
    sample: str | None = None  # provenance, for nondeterministic samples
    code: str | None = None


def _block_lines(indent: str, header: OutputHeader, text: str) -> list[str]:
    body = normalize(text)
    fence = fence_for(body)
    lines = [f"{indent}{line}" if line else "" for line in body.split("\n")]
    return [f"{indent}{fence}{header.fence_words()}", *lines, f"{indent}{fence}"]


def _text(block) -> str:
    return block.text if block is not None else ""


def plan(example: Example, actual: dict[str, str], provenance: dict[str, str]) -> tuple[object, object]:
    """What to do with the shared and the CUDA block (KEEP, REMOVE or a NewBlock), from actual outputs."""
    if example.options.nondeterministic:
        return _plan_sample(example, actual, provenance)
    shared, cuda = KEEP, KEEP
    current = _text(example.output)
    if "cpu" in actual:
        if not matches(current, actual["cpu"]):
            shared = NewBlock(actual["cpu"])
    elif "cuda" in actual and example.options.devices == ("cuda",):
        # A CUDA-only example: its shared block is its CUDA output.
        if not matches_on_cuda(current, actual["cuda"]):
            shared = NewBlock(actual["cuda"])
        return shared, (REMOVE if example.cuda_output is not None else KEEP)
    if "cuda" in actual:
        base = current if shared is KEEP else shared.text
        if matches_on_cuda(base, actual["cuda"]):
            cuda = REMOVE if example.cuda_output is not None else KEEP
        elif example.cuda_output is None or not matches(example.cuda_output.text, actual["cuda"]):
            cuda = NewBlock(actual["cuda"])
    return shared, cuda


def _plan_sample(example: Example, actual: dict[str, str], provenance: dict[str, str]) -> tuple[object, object]:
    shared, cuda = KEEP, KEEP
    for device, text in actual.items():
        new = NewBlock(text, provenance[device], example.code_hash)
        if device == "cuda" and "cpu" in example.options.devices:
            cuda = new
        else:
            shared = new
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
                anchor = block.end_line if block is not None else anchor
                continue
            if new is not REMOVE and not normalize(new.text):
                new = REMOVE
            if new is REMOVE:
                if block is not None:
                    start = block.line - 1
                    if start > 0 and not lines[start - 1].strip():
                        start -= 1
                    edits.append((start, block.end_line, []))
                    changes.append(f"{ex.name}: removed {what}")
                continue
            replacement = _block_lines(ex.indent, OutputHeader(label, new.sample, new.code), new.text)
            if block is not None:
                edits.append((block.line - 1, block.end_line, replacement))
                anchor = block.end_line
                changes.append(f"{ex.name}: rewrote {what}")
            else:
                edits.append((anchor, anchor, ["", *replacement]))
                changes.append(f"{ex.name}: added {what}")
    # Bottom-up; of two blocks added at one place (shared and CUDA, both new), the later-planned goes in first,
    # so the shared block ends up before the CUDA one.
    order = sorted(range(len(edits)), key=lambda k: (edits[k][0], edits[k][1], k), reverse=True)
    for start, end, replacement in (edits[k] for k in order):
        lines[start:end] = replacement
    return "\n".join(lines), changes


def refusal(text: str, limit: int, secrets: list[str]) -> str | None:
    """Why this captured output must not be written into a page, or None."""
    size = len(text.encode("utf-8"))
    if size > limit:
        return f"output is {size} bytes, over the {limit}-byte limit for one block (--max-output)"
    if any(secret in text for secret in secrets):
        return "output contains the value of one of your environment variables; a commit would publish it"
    return None


class PageChanged(Exception):
    """The page's file changed on disk since it was read."""


def write_page(page: Page, text: str) -> None:
    """Write the page's new text with its line endings, only over exactly the bytes that were read, and only
    at its own path (a page turned into a symbolic link since it was read is not written: paths.py)."""
    if page.digest is not None and hashlib.sha256(page.path.read_bytes()).hexdigest() != page.digest:
        raise PageChanged(page.rel)
    try:
        record.write_atomic(page.path, text.replace("\n", page.newline) if page.newline != "\n" else text)
    except UnsafePath as exc:
        raise PageChanged(f"{page.rel}: {exc}") from None
