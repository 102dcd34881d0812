"""Build the real site (and its offline zip) once per test session, and a fixture site with CPU/CUDA tabs.

Both go through the render step, then the site generator HANDBOOK_SITE_GENERATOR names: mkdocs (the default) or
zensical (offline copy with Zensical's own offline plugin). HANDBOOK_BUILT_SITE reuses a site
(with its zip) built before.
"""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from handbook import DOCS, ROOT
from handbook.site import build as render_step
from handbook.site import offline, site_config

ARTIFACTS = ROOT / "test-artifacts"
FIXTURE_DOCS = Path(__file__).parents[1] / "fixtures" / "site" / "docs"
GENERATOR = os.environ.get("HANDBOOK_SITE_GENERATOR", "mkdocs")
if GENERATOR not in site_config.GENERATORS:
    raise pytest.UsageError(f"HANDBOOK_SITE_GENERATOR={GENERATOR!r}: one of {', '.join(site_config.GENERATORS)}")


def _run(command: list[str]) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def build(docs: Path, tmp: Path) -> Path:
    """Render docs into tmp/build and convert it with the selected generator; returns the site folder."""
    rendered = tmp / "build"
    render_step.write(rendered, docs)
    if GENERATOR == "mkdocs":
        site = tmp / "site"
        for language, where in (("en", site), ("zh", site / "zh")):  # the Chinese edition in its folder
            config = rendered / site_config.config_name("mkdocs", language)
            _run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config), "-d", str(where)])
        return site
    for language in ("en", "zh"):
        _run(
            [
                str(Path(sys.executable).with_name("zensical")),
                "build",
                "-f",
                str(rendered / site_config.config_name("zensical", language)),
            ]
        )
        _run(
            [
                sys.executable,
                "-m",
                "handbook.site.zensical_adapter",
                str(site_config.site_dir("zensical", rendered, language)),
            ]
        )
    return site_config.site_dir("zensical", rendered)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    reuse = os.environ.get("HANDBOOK_BUILT_SITE")  # iterate on the tests against a site (with its zip) built before
    if reuse:
        return Path(reuse)
    out = build(DOCS, tmp_path_factory.mktemp("site"))
    offline.build(out, generator=GENERATOR)
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
    return build(FIXTURE_DOCS, tmp_path_factory.mktemp("fixture-site"))


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
