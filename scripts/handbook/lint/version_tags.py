"""What lint needs from the version data (versions/history.json, written by `versions probe` and `versions merge`):
the data itself and the version tags (2.0-new, 1.0-compatible) it implies for an API (lint HB034/HB035).

The probe and the merge live in releases/; this module only reads their result, so lint never imports them.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from packaging.version import Version

from handbook import ROOT

HISTORY = ROOT / "versions" / "history.json"


@lru_cache(maxsize=4)
def _load(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def load(path: Path = HISTORY) -> dict | None:
    """The merged version data, or None when no probe ran yet."""
    return _load(path)


def api_added_in_2x(found: dict, data: dict) -> bool:
    """The API is missing from a 1.x release the probe ran and present in a later, 2.x one."""
    old = [r["release"] for r in data["releases"] if Version(r["release"]).major < 2]
    return bool(found.get("added")) and any(found["status"].get(r) == "absent" for r in old)


def added_in_2x(found: dict, data: dict, api: str | None = None) -> bool | None:
    """New in 2.x: the API appeared in a 2.x release, or changed there — a parameter added, removed or given
    another default, or an example of its page that needs what the 1.x release lacks. None when the data cannot
    tell (no 1.x release probed, or the API could not be looked at there)."""
    old = [r["release"] for r in data["releases"] if Version(r["release"]).major < 2]
    if not old or found["status"].get(old[-1]) == "unknown":
        return None
    if api_added_in_2x(found, data):
        return True
    params = (found.get("parameters") or {}).values()
    readable_in_1x = any(p["added"].startswith("≤1.") for p in params)
    for p in params:
        if "defaults" in p or "removed" in p or (readable_in_1x and not p["added"].startswith("≤1.")):
            return True
    pages = [p for p in data["pages"].values() if api is not None and p["api"] == api]
    return any(e["results"].get(old[-1]) == "missing-api" for p in pages for e in p["examples"])


def expected_tags(tags: list[str], found: dict, data: dict, api: str | None = None) -> list[str]:
    """The page's tags with 2.0-new and 1.0-compatible as the data has them (lint HB035)."""
    out = list(tags)
    new = added_in_2x(found, data, api)
    if "2.0-new" in out and new is False:
        out.remove("2.0-new")
    if "2.0-new" not in out and new is True and api_added_in_2x(found, data):
        out.append("2.0-new")
    if "1.0-compatible" in out and api_added_in_2x(found, data):
        out.remove("1.0-compatible")
    return out
