"""`python -m handbook offline`: build the offline copy and zip it into site/download/.

The render step renders the pages again for it (`render --offline`: no directory URLs, the offline plugin on,
the home page says it is the offline copy), MkDocs converts them, and the prebuilt search index is added.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from handbook import DOCS, ROOT
from handbook.site import build as render_step
from handbook.site import prebuilt_index

ZIP_NAME = "pytorch-handbook-offline.zip"
FOLDER = "pytorch-handbook"  # the one top-level folder inside the zip


def build(site_dir: Path = ROOT / "site", docs: Path = DOCS) -> Path:
    """Build the offline site in a temporary folder and zip it to site_dir/download/. Returns the zip's path."""
    target = site_dir / "download" / ZIP_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / FOLDER
        rendered = Path(tmp) / "build"
        render_step.write(rendered, docs, offline=True)
        env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
        subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(rendered / "mkdocs.yml")]
            + ["-d", str(out)],
            cwd=ROOT,
            env=env,
            check=True,
        )
        prebuilt_index.build(out)
        partial = target.with_suffix(".zip.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for path in sorted(out.rglob("*")):
                if path.is_file():
                    zf.write(path, Path(FOLDER) / path.relative_to(out))
        os.replace(partial, target)
    return target


def main() -> int:
    try:
        path = build()
    except (subprocess.CalledProcessError, prebuilt_index.PrebuildError) as exc:
        print(f"error: the offline build failed ({exc})", file=sys.stderr)
        return 1
    print(f"offline copy: {path.relative_to(ROOT)} ({path.stat().st_size / 2**20:.1f} MiB)")
    return 0
