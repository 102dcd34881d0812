"""Control characters in what a page prints: shown as a terminal leaves them, the rest escaped (terminal.py).

The round trip through a page (`verify --update` writes it, the parser reads it back, verify passes) is the golden
case tests/fixtures/update/control.in.md in test_update.py.
"""

import re

import pytest

from handbook.verify.terminal import shown


@pytest.mark.parametrize(
    ("printed", "kept"),
    [
        ("10%\r50%\r100%\n", "100%\n"),  # a progress bar redrawn in place
        ("abcdef\rXY", "XYcdef"),  # what the terminal leaves: the rest of the longer line
        ("done\r\n", "done\n"),  # a Windows line end
        ("\x1b[1;31mred\x1b[0m", "red"),  # colours
        ("\x1b[2K\x1b[1Aup", "up"),  # erase line, cursor up
        ("a\x00b", "a\\x00b"),
        ("bell\x07", "bell\\x07"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # not a CSI sequence: escaped, so a reader sees it
        ("x\x85y\u2028z", "x\\x85y\\u2028z"),  # line breaks Python would split on
        ("\u202eevil", "\\u202eevil"),  # right-to-left override
        ("tab\tstays\n", "tab\tstays\n"),
        ("tensor([1., 2.])\n", "tensor([1., 2.])\n"),
    ],
)
def test_what_a_terminal_shows(printed, kept):
    assert shown(printed) == kept


def test_shown_text_holds_no_control_character_and_is_stable():
    every = "".join(chr(c) for c in range(0x00, 0xA0)) + "\u2028\u2029\u202a\u202e\u2066\u2069"
    once = shown(every)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", once)
    assert shown(once) == once
