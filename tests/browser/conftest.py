"""Build the real site (and its offline zip) once per test session, and a fixture site with CPU/CUDA tabs."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from handbook import ROOT
from handbook.site import offline

ARTIFACTS = ROOT / "test-artifacts"
FIXTURE_DOCS = Path(__file__).parents[1] / "fixtures" / "site" / "docs"


def _mkdocs(config: Path, out: Path, **env) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config), "-d", str(out)],
        cwd=ROOT,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1", **env),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    reuse = os.environ.get("HANDBOOK_BUILT_SITE")  # iterate on the tests against a site (with its zip) built before
    if reuse:
        return Path(reuse)
    out = tmp_path_factory.mktemp("site") / "site"
    _mkdocs(ROOT / "mkdocs.yml", out)
    offline.build(out)
    return out


@pytest.fixture(scope="session")
def offline_site(built_site, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("offline")
    with zipfile.ZipFile(built_site / "download" / offline.ZIP_NAME) as zf:
        zf.extractall(target)
    return target / offline.FOLDER


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory) -> Path:
    """The real configuration over a small docs folder whose pages have CUDA outputs (test input, not records)."""
    tmp = tmp_path_factory.mktemp("fixture-site")
    text = (ROOT / "mkdocs.yml").read_text()
    text = text.replace("docs_dir: docs", f"docs_dir: {FIXTURE_DOCS}")
    text = text.replace("custom_dir: overrides", f"custom_dir: {ROOT / 'overrides'}")
    text = text.replace(
        "- scripts/handbook/site/mkdocs_hooks.py", f"- {ROOT / 'scripts/handbook/site/mkdocs_hooks.py'}"
    )
    text = text.replace("extra_css:\n  - stylesheets/handbook.css\n", "")
    config = tmp / "mkdocs.yml"
    config.write_text(text)
    _mkdocs(config, tmp / "site")
    return tmp / "site"


@pytest.fixture(scope="session")
def browser():
    from handbook.bench.browser import chromium

    with chromium() as b:
        yield b


@pytest.fixture
def screenshot():
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=False)
        return path

    return take
