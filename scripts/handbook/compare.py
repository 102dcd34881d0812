"""Compare an example's actual output with the expected output written on the page, in layers.

1. whitespace: trailing spaces on each line and leading/trailing blank lines are ignored;
2. `...` in the expected output matches anything, within a line or across lines;
3. a float in the expected output matches any number equal to it at the precision written;
4. (CUDA pass, shared expected output only) `device='cuda:0'`, `torch.cuda.FloatTensor` and the like are
   normalized to the CPU spelling.
"""

from __future__ import annotations

import difflib
import itertools
import re

ELLIPSIS = "..."
# A float as written in expected output: digits with a point or an exponent. Not part of a word or a dotted name.
_FLOAT = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?(?![\w])")
_ANY_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_CUDA_SPELLINGS = [
    (re.compile(r", device='cuda(?::\d+)?'"), ""),
    (re.compile(r"device\(type='cuda'(?:, index=\d+)?\)"), "device(type='cpu')"),
    (re.compile(r"\btorch\.cuda\.(\w+Tensor)\b"), r"torch.\1"),  # autograd errors name the legacy tensor type
]


def normalize(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def normalize_cuda(text: str) -> str:
    for pattern, replacement in _CUDA_SPELLINGS:
        text = pattern.sub(replacement, text)
    return text


def _tolerance(token: str) -> float:
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10 ** (int(exponent or 0) - decimals)


def _pattern(expected: str) -> tuple[re.Pattern, list[str]]:
    parts: list[str] = []
    floats: list[str] = []
    for i, chunk in enumerate(expected.split(ELLIPSIS)):
        if i:
            parts.append(".*?")
        pos = 0
        for m in _FLOAT.finditer(chunk):
            parts.append(re.escape(chunk[pos : m.start()]))
            parts.append(f"({_ANY_NUMBER})")
            floats.append(m.group())
            pos = m.end()
        parts.append(re.escape(chunk[pos:]))
    return re.compile("".join(parts), re.DOTALL), floats


def matches(expected: str, actual: str) -> bool:
    expected, actual = normalize(expected), normalize(actual)
    if expected == actual:
        return True
    pattern, floats = _pattern(expected)
    m = pattern.fullmatch(actual)
    if m is None:
        return False
    for want, got in zip(floats, m.groups(), strict=True):
        if abs(float(got) - float(want)) > _tolerance(want) * (1 + 1e-9):
            return False
    return True


def matches_on_cuda(expected: str, actual: str) -> bool:
    """A shared expected output holds on the CUDA pass as written or with CUDA spellings normalized."""
    return matches(expected, actual) or matches(expected, normalize_cuda(actual))


DIFF_LINES, DIFF_WIDTH = 200, 500  # a report shows this much of a diff: huge outputs must not flood it


def diff(expected: str, actual: str, label: str) -> str:
    lines = difflib.unified_diff(_shown(expected), _shown(actual), "expected", f"actual ({label})", lineterm="")
    shown = list(itertools.islice(lines, DIFF_LINES + 1))
    if len(shown) > DIFF_LINES:
        shown[DIFF_LINES:] = [f"[diff cut after {DIFF_LINES} lines]"]
    return "\n".join(shown)


def _shown(text: str) -> list[str]:
    """The lines a diff compares: at most enough for DIFF_LINES, each cut to DIFF_WIDTH."""
    lines = normalize(text).split("\n")[: 4 * DIFF_LINES]
    return [
        line if len(line) <= DIFF_WIDTH else line[:DIFF_WIDTH] + f" [line cut: {len(line)} chars]" for line in lines
    ]
