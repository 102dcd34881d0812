"""What a page's output shows, in a form that is visible on the page and reads back as it was written.

Applied by the verifier to everything a page's process sends (output, error, stderr), before it is compared,
printed, recorded or written into a page:

1. `\\r\\n` is a line end;
2. terminal control sequences (`ESC [ ... letter`: colours, bold, cursor moves, erase line) are dropped;
3. a lone `\\r` goes back to the start of the line, as on a terminal, and what follows overwrites what was there:
   `"10%\\r100%"` shows `100%`, `"abcdef\\rXY"` shows `XYcdef` (what the terminal leaves on screen);
4. every other control character (NUL, BEL, backspace, a lone ESC, form feed, DEL, the C1 controls) and the
   invisible line and direction marks (U+2028, U+2029, U+202A-U+202E, U+2066-U+2069) are written as Python
   escapes: `\\x00`, `\\x1b`, `\\x7f`, `\\u2028`. Tabs and newlines stay.

The result holds no control character but `\\t` and `\\n`, so `verify --update` writes it as it is, the page parser
reads back exactly that, and `shown(shown(x)) == shown(x)`. The escapes cannot be told from the same text printed
literally (`print(r"\\x00")`): both show, and compare, alike.
"""

from __future__ import annotations

import re

_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    char = match.group()
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def _overwrite(line: str) -> str:
    """A line with lone carriage returns, as a terminal leaves it: each part overwrites from column 0."""
    parts = line.split("\r")
    shown = list(parts[0])
    for part in parts[1:]:
        shown[: len(part)] = part
    return "".join(shown)


def shown(text: str) -> str:
    text = _CSI.sub("", text.replace("\r\n", "\n"))
    if "\r" in text:
        text = "\n".join(_overwrite(line) for line in text.split("\n"))
    return _INVISIBLE.sub(_escape, text)
