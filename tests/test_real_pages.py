"""The real handbook: every page lints clean, every example passes on CPU, the record is current, the site builds."""

import os
import subprocess
import sys

import pytest

from handbook import DOCS, ROOT, record
from handbook.document import parse_page
from handbook.lint import lint
from handbook.verify import NO_GPU, collect, print_report, probe_gpu, verify


def test_every_page_lints_clean():
    findings = lint()
    assert not findings, "\n".join(map(str, findings))


@pytest.fixture(scope="module")
def report():
    return verify(devices=("cpu", "cuda"), use_cache=False, record_path=None)


def test_every_example_passes_on_cpu(report):
    print_report(report, ("cpu", "cuda"), out=sys.stderr)
    assert report.failed == 0
    assert report.count("passed", "cpu") >= 30


def test_cuda_examples_run_or_are_skipped_with_a_reason(report):
    cuda = [o for o in report.outcomes if o.device == "cuda"]
    if probe_gpu() is None:
        assert not any(o.status == "passed" for o in cuda)
        assert sum(o.reason == NO_GPU for o in cuda) >= 30
    else:
        assert report.count("passed", "cuda") >= 30


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
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    html = (tmp_path / "site" / "torch" / "cat" / "index.html").read_text()
    assert "Verified on CPU" in html and "CUDA: not yet verified" in html
    assert DOCS.exists()
