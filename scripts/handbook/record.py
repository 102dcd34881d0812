"""The verification record (docs/verification.json): per page and device, what was verified, where and when.

Only the verifier writes it. A record whose hash differs from the page's current examples hash is stale.
"""

from __future__ import annotations

import datetime
import fcntl
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from . import DOCS

RECORD = DOCS / "verification.json"


def _version(package: str) -> str:
    """A package's full version (torch's carries its build, like 2.14.1+cu130), read without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return "not installed"
    version_file = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    m = (
        re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", version_file.read_text(), re.M)
        if version_file.exists()
        else None
    )
    return m.group(1) if m else importlib.metadata.version(package)


def environment() -> dict:
    return {"torch": _version("torch"), "torchvision": _version("torchvision"), "python": platform.python_version()}


def load(path: Path = RECORD) -> dict:
    if not path.exists():
        return {"pages": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def write_atomic(path: Path, text: str) -> None:
    """Replace the file at once, keeping its mode (a new file gets the usual one: 0666 less the umask)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(record: dict, path: Path = RECORD) -> None:
    record["pages"] = dict(sorted(record["pages"].items()))
    write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False, sort_keys=False) + "\n")


@contextmanager
def locked(path: Path):
    """Serialize read-modify-write of a shared file between verifier processes running at once."""
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def update(path: Path, results: dict, env: dict, gpu: str | None, alive: set[str] | None) -> None:
    """Write one entry per (page, device) in results; with `alive`, drop pages not in it."""
    with locked(path):
        data = load(path)
        for (rel, device), (examples_hash, counts) in results.items():
            previous = data["pages"].get(rel, {}).get(device)
            data["pages"].setdefault(rel, {})[device] = entry(
                examples_hash, counts, env, gpu if device == "cuda" else None, previous
            )
        if alive is not None:
            data["pages"] = {k: v for k, v in data["pages"].items() if k in alive}
        save(data, path)


def entry(examples_hash: str, counts: dict, env: dict, gpu: str | None, previous: dict | None) -> dict:
    outcome = "failed" if counts["failed"] else "passed" if counts["passed"] else "skipped"
    new = {"hash": examples_hash, "outcome": outcome, **counts, **env}
    if gpu:
        new["gpu"] = gpu
    # Re-verifying identical content keeps its date, so the record only changes when something did.
    same = previous and all(previous.get(k) == v for k, v in new.items())
    new["date"] = previous["date"] if same else datetime.date.today().isoformat()
    return new


def status(record: dict, rel: str, device: str, examples_hash: str) -> tuple[str, dict | None]:
    """'verified', 'failed', 'skipped', 'stale' or 'unverified', and the entry behind it."""
    found = record.get("pages", {}).get(rel, {}).get(device)
    if not found:
        return "unverified", None
    if found.get("hash") != examples_hash:
        return "stale", found
    return {"passed": "verified"}.get(found.get("outcome"), found.get("outcome", "unverified")), found
