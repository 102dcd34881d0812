"""The real handbook: every page lints clean, every example passes on CPU, the record is current, the site builds."""

import os
import re
import subprocess
import sys

import pytest

from handbook import DOCS, ROOT
from handbook.lint.rules import lint
from handbook.site.render import badge
from handbook.verify import record
from handbook.verify.document import collect, parse_page
from handbook.verify.runner import probe_gpu


def test_every_page_lints_clean():
    findings = lint()
    assert not findings, "\n".join(map(str, findings))


@pytest.fixture(scope="module")
def report() -> str:
    """The verifier run as readers and CI run it: its own process, so nothing of pytest's process leaks in."""
    result = subprocess.run(
        [sys.executable, "-m", "handbook", "verify", "--no-cache", "--no-record"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    print(result.stdout, file=sys.stderr)
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    return result.stdout


def _counts(report: str, prefix: str) -> tuple[int, int, int, str]:
    line = next(x for x in report.split("\n") if x.startswith(prefix))
    m = re.match(rf"{re.escape(prefix)}(\d+) passed, (\d+) failed, (\d+) skipped(.*)$", line)
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)


def test_every_example_passes_on_cpu(report):
    passed, failed, _, _ = _counts(report, "cpu: ")
    assert failed == 0 and passed >= 30
    assert re.fullmatch(r"\d+ passed, 0 failed, \d+ skipped", report.rstrip().split("\n")[-1])


def test_cuda_examples_run_or_are_skipped_with_a_reason(report):
    passed, failed, skipped, reasons = _counts(report, "cuda: ")
    if probe_gpu() is None:
        assert passed == 0 and failed == 0
        assert int(re.search(r"(\d+) × cuda: no GPU", reasons).group(1)) >= 30
    else:
        assert passed >= 30


def test_committed_record_matches_every_page():
    """A page edited without re-running the verifier would show as stale on the site: catch it here."""
    data = record.load()
    stale = []
    for path in collect(None):
        page = parse_page(path)
        if page.examples:
            state, _ = record.status(data, page.rel, "cpu", page.examples_hash)
            if state != "verified":
                stale.append(f"{page.rel}: {state} (run: python -m handbook verify)")
    assert not stale, "\n".join(stale)


def test_site_builds_strictly(tmp_path):
    from handbook.site import build

    build.write(tmp_path / "build")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    config = tmp_path / "build" / "mkdocs.yml"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config), "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    html = (tmp_path / "site" / "torch" / "cat" / "index.html").read_text()
    # the badges say what the committed record says of the page, whichever devices it has verified
    page = parse_page(DOCS / "torch" / "cat.md")
    data = record.load()
    for device in ("cpu", "cuda"):
        expected = badge(device, *record.status(data, page.rel, device, page.examples_hash))
        assert expected.replace("·", "&middot;") in html or expected in html, expected
