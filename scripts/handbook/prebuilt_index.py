"""The offline copy's prebuilt search index: built once by mkdocs-material's own search worker, run in Node.

From file:// the worker runs inside an iframe (iframe-worker) and would build the whole lunr index again on every
page load; the offline copy ships the built index as search/search_prebuilt.js instead, which the patched worker
(search_index.PREBUILT_PATCHES) loads. The same code builds it from the same search_index.json, so offline results
are the online ones.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).with_name("prebuild_search.js")


class PrebuildError(RuntimeError):
    pass


def build(site_dir: Path) -> Path:
    node = shutil.which("node")
    if node is None:
        raise PrebuildError(
            "node is not installed: the offline copy's prebuilt search index needs it (apt-get install nodejs)"
        )
    result = subprocess.run([node, str(SCRIPT), str(site_dir)], capture_output=True, text=True)
    if result.returncode != 0:
        raise PrebuildError(f"prebuilding the search index failed:\n{result.stderr}")
    return site_dir / "search" / "search_prebuilt.js"
