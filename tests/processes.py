"""Test helper: the processes of this machine whose command line holds a marker (a page's process, found by a
number only its code contains)."""

from pathlib import Path


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found
