"""`python -m handbook lighthouse SITE`: Lighthouse's four scores for the home page and five api pages.

Lighthouse is an npm package, not a Python one: install it outside the shared environment
(`npm install --prefix /tmp/lh lighthouse`) and pass its binary with --lighthouse (or put it on PATH). It drives
Debian's Chromium (CHROME_PATH). Default settings: mobile emulation, simulated throttling. The site is served
with its text gzip-compressed, as GitHub Pages and other static hosts serve it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from handbook.bench.browser import CHROMIUM, serve

PAGES = [
    "",
    "torch/cat/",
    "torch/nn/conv2d/",
    "torch/utils/data/dataloader/",
    "torch/nn/functional/softmax/",
    "torch/optim/adamw/",
]
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")


def scores(report: dict) -> dict[str, int]:
    return {c: round(100 * (report["categories"][c]["score"] or 0)) for c in CATEGORIES}


def failing_audits(report: dict) -> list[str]:
    return sorted(
        a for a, v in report["audits"].items() if v.get("scoreDisplayMode") == "binary" and v.get("score") == 0
    )


def run(site: Path, binary: str, pages: list[str] = PAGES) -> dict[str, dict]:
    out = {}
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    with serve(site, compress=True) as base, tempfile.TemporaryDirectory() as tmp:
        for page in pages:
            path = Path(tmp) / "report.json"
            command = [
                binary,
                base + page,
                "--quiet",
                "--output=json",
                f"--output-path={path}",
                "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
            ]
            for _attempt in (1, 2):  # a loaded machine can miss Lighthouse's page-load timeout once
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                if done.returncode == 0:
                    break
            if done.returncode:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                out[page or "(home)"] = {"error": f"lighthouse exited {done.returncode}: " + " | ".join(tail)}
                continue
            report = json.loads(path.read_text())
            out[page or "(home)"] = {**scores(report), "failing": failing_audits(report)}
    return out


def main(site: str, binary: str | None) -> int:
    binary = binary or shutil.which("lighthouse")
    if not binary:
        print(
            "error: lighthouse not found: npm install --prefix DIR lighthouse, then --lighthouse DIR/node_modules/.bin/lighthouse",
            file=sys.stderr,
        )
        return 2
    errors = 0
    for page, result in run(Path(site), binary).items():
        if "error" in result:
            print(f"{page}: {result['error']}")
            errors += 1
            continue
        cells = " ".join(f"{c} {result[c]}" for c in CATEGORIES)
        print(f"{page}: {cells}" + (f" (failing: {', '.join(result['failing'])})" if result["failing"] else ""))
    return 1 if errors else 0
