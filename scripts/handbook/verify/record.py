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

from handbook import DOCS
from handbook.verify import paths

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
    """Replace the file at once, keeping its mode (a new file gets the usual one: 0666 less the umask).
    paths.UnsafePath when the path goes through a symbolic link: the tool never writes where a link leads."""
    path = paths.checked(path)
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
    fd = paths.open_no_follow(path.with_name(f".{path.name}.lock"), os.O_WRONLY | os.O_CREAT)
    with os.fdopen(fd, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# Entries the record had before it named machines: kept as evidence, shown under this name.
UNNAMED = "a machine the record did not name"
OUTPUT_LIMIT = 4000  # characters of a machine-dependent output kept in the record


def by_machine(device_entry: dict) -> dict[str, dict]:
    """machine -> entry for one page and device; reads the older one-entry form too."""
    if "hash" in device_entry:  # written before records named machines
        legacy = dict(device_entry)
        return {legacy.pop("gpu", None) or UNNAMED: legacy}
    return device_entry


def update(
    path: Path,
    results: dict,
    env: dict,
    machines: dict[str, str],
    alive: set[str] | None,
    outputs: dict[str, dict] | None = None,
) -> None:
    """Write one entry per (page, device) in results, under the machine that ran it (machines: device -> name).

    Entries of other machines stay (a page verified on two machines lists both) unless they verified other
    examples than this run did. outputs: page -> {code hash: {device: output}} of machine-dependent examples,
    plus the key "live" holding every code hash the page has now (older outputs are dropped).
    With `alive`, pages not in it are dropped.
    """
    with locked(path):
        data = load(path)
        for (rel, device), (examples_hash, counts) in results.items():
            page = data["pages"].setdefault(rel, {})
            machine = machines[device]
            entries = {m: e for m, e in by_machine(page.get(device, {})).items() if e.get("hash") == examples_hash}
            entries[machine] = entry(examples_hash, counts, env, entries.get(machine))
            page[device] = dict(sorted(entries.items()))
        for rel, found in (outputs or {}).items():
            _record_outputs(data["pages"].setdefault(rel, {}), found, env, machines)
        if alive is not None:
            data["pages"] = {k: v for k, v in data["pages"].items() if k in alive}
        save(data, path)


def _record_outputs(page: dict, found: dict, env: dict, machines: dict[str, str]) -> None:
    live = set(found.get("live", ()))
    kept = {h: v for h, v in page.get("machine_outputs", {}).items() if h in live}
    for code_hash, per_device in found.items():
        if code_hash == "live":
            continue
        for device, text in per_device.items():
            if len(text) > OUTPUT_LIMIT:
                text = text[:OUTPUT_LIMIT] + "\n... (cut at the record's size limit)"
            slot = kept.setdefault(code_hash, {}).setdefault(device, {})
            previous = slot.get(machines[device])
            new = {"output": text, "torch": env["torch"]}
            same = previous and all(previous.get(k) == v for k, v in new.items())
            new["date"] = previous["date"] if same else datetime.date.today().isoformat()
            slot[machines[device]] = new
            kept[code_hash][device] = dict(sorted(slot.items()))
    if kept:
        page["machine_outputs"] = kept
    else:
        page.pop("machine_outputs", None)


def entry(examples_hash: str, counts: dict, env: dict, previous: dict | None) -> dict:
    outcome = "failed" if counts["failed"] else "passed" if counts["passed"] else "skipped"
    new = {"hash": examples_hash, "outcome": outcome, **counts, **env}
    # Re-verifying identical content keeps its date, so the record only changes when something did.
    same = previous and all(previous.get(k) == v for k, v in new.items())
    new["date"] = previous["date"] if same else datetime.date.today().isoformat()
    return new


def merge(into: dict, other: dict) -> dict:
    """Records of two machines (or two checkouts) as one: per page, device and machine, the newer entry wins."""
    for rel, page in other.get("pages", {}).items():
        mine = into["pages"].setdefault(rel, {})
        for device, value in page.items():
            if device == "machine_outputs":
                for code_hash, per_device in value.items():
                    for dev, machines in per_device.items():
                        slot = mine.setdefault("machine_outputs", {}).setdefault(code_hash, {}).setdefault(dev, {})
                        for machine, found in machines.items():
                            if machine not in slot or found.get("date", "") > slot[machine].get("date", ""):
                                slot[machine] = found
                continue
            entries = by_machine(mine.get(device, {}))
            for machine, found in by_machine(value).items():
                if machine not in entries or found.get("date", "") > entries[machine].get("date", ""):
                    entries[machine] = found
            mine[device] = dict(sorted(entries.items()))
    return into


class NotARecord(ValueError):
    """A file given to merge-records that is not a verification record."""


def merge_files(others: list[Path], path: Path = RECORD) -> dict:
    """Merge records written on other machines (or CI runners) into the record at `path`; nothing is written
    when any of them cannot be read."""
    with locked(path):
        merged = load(path)
        for other in others:
            try:
                found = load(other)
                if not isinstance(found, dict) or not isinstance(found.get("pages"), dict):
                    raise ValueError("no 'pages' mapping")
                merge(merged, found)
            except (OSError, ValueError, KeyError, AttributeError) as exc:
                raise NotARecord(f"{other}: not a verification record ({exc})") from None
        save(merged, path)
    return merged


def status(record: dict, rel: str, device: str, examples_hash: str) -> tuple[str, dict | None]:
    """'verified', 'failed', 'skipped', 'stale' or 'unverified', and the newest entry behind it.

    The entry carries "machines" (every machine whose run passed the page's current examples) and "failed_on"
    (those whose run failed them): a failure on any machine makes the page failed.
    """
    found = by_machine(record.get("pages", {}).get(rel, {}).get(device, {}))
    if not found:
        return "unverified", None
    current = {m: e for m, e in found.items() if e.get("hash") == examples_hash}
    if not current:
        return "stale", max(found.values(), key=lambda e: e.get("date", ""))
    newest = max(current.values(), key=lambda e: e.get("date", ""))
    info = {
        **newest,
        "machines": sorted(m for m, e in current.items() if e.get("outcome") == "passed"),
        "failed_on": sorted(m for m, e in current.items() if e.get("outcome") == "failed"),
    }
    if info["failed_on"]:
        return "failed", info
    if info["machines"]:
        return "verified", info
    return newest.get("outcome", "unverified"), info


def machine_outputs(record: dict, rel: str, code_hash: str) -> dict[str, dict[str, dict]]:
    """device -> machine -> {output, torch, date} recorded for a machine-dependent example."""
    return record.get("pages", {}).get(rel, {}).get("machine_outputs", {}).get(code_hash, {})
