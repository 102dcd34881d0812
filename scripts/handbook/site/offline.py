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
from handbook.i18n.catalog import LANGUAGES
from handbook.site import build as render_step
from handbook.site import math, prebuilt_index, site_config, zensical_adapter

ZIP_NAME = "pytorch-handbook-offline.zip"
FOLDER = "pytorch-handbook"  # the one top-level folder inside the zip


def build(site_dir: Path = ROOT / "site", docs: Path = DOCS, generator: str = "mkdocs") -> Path:
    """Build the offline site in a temporary folder and zip it to site_dir/download/. Returns the zip's path."""
    target = site_dir / "download" / ZIP_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        rendered = Path(tmp) / "build"
        render_step.write(rendered, docs, offline=True)
        out = _convert(rendered, Path(tmp) / FOLDER, generator)
        partial = target.with_suffix(".zip.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for path in sorted(out.rglob("*")):
                if path.is_file():
                    zf.write(path, Path(FOLDER) / path.relative_to(out))
        os.replace(partial, target)
    return target


def _convert(rendered: Path, out: Path, generator: str) -> Path:
    """The rendered offline folder through the generator; returns the site folder."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    languages = ("en", *LANGUAGES)  # each language's site; a translation's in its folder (zh/), both searchable
    if generator == "zensical":  # its own offline plugin; its search loads search.js from file:// as it is
        zensical = Path(sys.executable).with_name("zensical")
        for language in languages:
            config = rendered / site_config.config_name("zensical", language)
            subprocess.run([str(zensical), "build", "-f", str(config)], cwd=ROOT, env=env, check=True)
            zensical_adapter.apply(site_config.site_dir("zensical", rendered, language))
        return site_config.site_dir("zensical", rendered)
    for language in languages:
        config = rendered / site_config.config_name("mkdocs", language)
        where = out if language == "en" else out / language
        command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(config), "-d", str(where)]
        subprocess.run(command, cwd=ROOT, env=env, check=True)
        prebuilt_index.build(where)
    return out


def main(generator: str = "mkdocs") -> int:
    site = ROOT / "site" if generator == "mkdocs" else site_config.site_dir(generator, render_step.DEFAULT_OUT)
    try:
        path = build(site, generator=generator)
    except (
        subprocess.CalledProcessError,
        prebuilt_index.PrebuildError,
        zensical_adapter.AdapterError,
        math.MathError,
    ) as exc:
        print(f"error: the offline build failed ({exc})", file=sys.stderr)
        return 1
    print(f"offline copy: {path.relative_to(ROOT)} ({path.stat().st_size / 2**20:.1f} MiB)")
    return 0
