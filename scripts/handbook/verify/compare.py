"""Compare an example's actual output with the expected output written on the page, in layers.

1. whitespace: trailing spaces on each line and leading/trailing blank lines are ignored;
2. `...` in the expected output matches anything, within a line or across lines;
3. a float in the expected output matches a number within one unit in its last written digit, when it is written
   with enough digits for that to be safe (see `allowance`); otherwise it must equal it at the precision written.
   Integers, shapes, dtypes, booleans and text stay exact;
4. (CUDA pass, shared expected output only) `device='cuda:0'`, `torch.cuda.FloatTensor` and the like are
   normalized to the CPU spelling.
"""

from __future__ import annotations

import difflib
import itertools
import re

ELLIPSIS = "..."
# A float as written in expected output: digits with a point or an exponent. Not part of a word or a dotted name.
# A version such as 2.14.1 is not a float: no point-and-digit may follow.
_FLOAT = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?(?!\w|\.\d)")
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


def _digits(token: str) -> tuple[int, int, int]:
    """(significant digits, digits after the point, exponent) of a float as written."""
    mantissa, _, exponent = token.lower().lstrip("+-").partition("e")
    whole, _, fraction = mantissa.partition(".")
    significant = len((whole + fraction).lstrip("0"))
    return significant, len(fraction), int(exponent or 0)


def allowance(token: str) -> float:
    """How far an actual number may be from the expected `token`.

    Two correct IEEE-754 machines can print a value that lies near a rounding boundary differently in the last
    digit (GELU(-3) = -0.0040497... prints as -0.0040 or -0.0041), so one unit in the last written digit is
    allowed — but only when that unit is small: the token has at least three significant digits (one unit is at
    most 1% of the value) or at least four digits after the point (torch's print precision: one unit is at most
    1e-4). "0.5" vs "0.6" or "1.5e-05" vs "1.6e-05" are real differences and still fail. Tokens with fewer digits
    must equal the actual number at the precision written (half a unit), so "0.33" matches "0.3333".
    """
    significant, decimals, exponent = _digits(token)
    unit = 10.0 ** (exponent - decimals)
    enough = significant >= 3 or ("e" not in token.lower() and decimals >= 4)
    return unit if enough else 0.5 * unit


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
        if abs(float(got) - float(want)) > allowance(want) * (1 + 1e-9):
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
