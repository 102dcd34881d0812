"""A local cache of passed pages, so an unchanged page is not run again. Never committed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from handbook import ROOT
from handbook.verify.record import locked, write_atomic

CACHE = ROOT / ".handbook-cache" / "verify.json"


def _tool_hash() -> str:
    """Changing the verifier itself invalidates every cached result."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parents[1].rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


class Cache:
    def __init__(self, path: Path = CACHE, enabled: bool = True, machine: str = ""):
        self.path, self.enabled, self.machine = path, enabled, machine  # a page passed on one CPU class, not all
        self.entries: dict[str, str] = {}
        if enabled and path.exists():
            try:
                self.entries = json.loads(path.read_text())
            except (OSError, ValueError):
                self.entries = {}
        self.tool = _tool_hash()
        self.changed: dict[str, str] = {}
        self.dropped: set[str] = set()

    def key(self, page, device: str, env: dict) -> str:
        parts = [page.examples_hash, device, env["torch"], env["torchvision"], env["python"], self.machine, self.tool]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]

    def hit(self, page, device: str, env: dict) -> bool:
        return self.enabled and self.entries.get(f"{page.rel}|{device}") == self.key(page, device, env)

    def store(self, page, device: str, env: dict, passed: bool) -> None:
        name = f"{page.rel}|{device}"
        if passed:
            self.entries[name] = self.changed[name] = self.key(page, device, env)
        else:
            self.entries.pop(name, None)
            self.changed.pop(name, None)
            self.dropped.add(name)

    def save(self) -> None:
        """Merge this run's entries into the file, so verifiers running at once do not lose each other's."""
        if not self.enabled:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path):
            on_disk = Cache(self.path).entries
            on_disk.update(self.changed)
            for name in self.dropped:
                on_disk.pop(name, None)
            write_atomic(self.path, json.dumps(on_disk, indent=1, sort_keys=True))
