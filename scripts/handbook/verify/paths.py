"""Where the tool may write: only where a path says, never where a symbolic link leads.

A page, the record and the cache are written only if the path, as named, is a regular file (or does not exist
yet) and no folder on the way to it is a symbolic link: inside the repository, every folder from its root down;
outside it (a page named by its full path, as tests do), the file itself. A link inside the repository could
otherwise send `verify --update` (or a lock file) to a file anywhere on the machine.
"""

from __future__ import annotations

import os
from pathlib import Path

from handbook import ROOT


class UnsafePath(OSError):
    """The tool was asked to write through a symbolic link, or outside the repository."""


def link_on_the_way(path: Path) -> Path | None:
    """The first symbolic link the path goes through (the file itself included), or None. `path` is taken as
    written (made absolute, `..` resolved), not resolved."""
    path = Path(os.path.abspath(path))
    try:
        rel = path.relative_to(ROOT)
    except ValueError:
        return path if path.is_symlink() else None
    current = ROOT
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def describe(link: Path) -> str:
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    return f"{shown_path(link)} is a symbolic link (to {target})"


def shown_path(path: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def checked(path: Path) -> Path:
    """`path` (absolute), if the tool may write it; else UnsafePath saying why."""
    link = link_on_the_way(path)
    if link is not None:
        raise UnsafePath(f"not written: {describe(link)}; the tool writes no file through a link")
    absolute = Path(os.path.abspath(path))
    if absolute.is_relative_to(ROOT) and not absolute.resolve().is_relative_to(ROOT.resolve()):
        raise UnsafePath(f"not written: {shown_path(absolute)} resolves outside the repository")
    return absolute


def open_no_follow(path: Path, flags: int, mode: int = 0o666) -> int:
    """os.open that refuses a link at the last step too (a link created after `checked`)."""
    return os.open(checked(path), flags | os.O_NOFOLLOW, mode)
