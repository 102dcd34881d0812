"""Golden tests for `verify --update`: input page and expected page side by side in fixtures/update/."""

import shutil
import subprocess
from pathlib import Path

import pytest

from handbook.verify import record
from handbook.verify.runner import verify

UPDATE = Path(__file__).parent / "fixtures" / "update"
CASES = sorted(p.name.removesuffix(".in.md") for p in UPDATE.glob("*.in.md"))


@pytest.mark.parametrize("case", CASES)
def test_update_rewrites_only_output_blocks(case, tmp_path, capsys):
    page = tmp_path / f"{case}.md"
    shutil.copy(UPDATE / f"{case}.in.md", page)
    before = verify([str(page)], devices=("cpu",), use_cache=False, record_path=None)
    assert before.failed, "the input page must start out failing"
    report = verify([str(page)], devices=("cpu",), update=True, use_cache=False, record_path=None)
    assert report.failed == 0
    assert page.read_text() == (UPDATE / f"{case}.expected.md").read_text()
    assert report.changes  # it says what it changed
    again = verify([str(page)], devices=("cpu",), use_cache=False, record_path=None)
    assert again.failed == 0 and not again.changes


def test_update_leaves_no_temporary_files(tmp_path):
    page = tmp_path / "p.md"
    shutil.copy(UPDATE / "outputs.in.md", page)
    verify([str(page)], devices=("cpu",), update=True, use_cache=False, record_path=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.md"]


def test_one_changed_digit_fails_and_update_restores_only_that_block(tmp_path):
    """The issue's check: change one digit, verify fails with path:line and a diff; --update restores it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    page = repo / "page.md"
    shutil.copy(UPDATE / "outputs.expected.md", page)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "page"], check=True)
    page.write_text(page.read_text().replace("torch.Size([3])", "torch.Size([4])"))
    report = verify([str(page)], devices=("cpu",), use_cache=False, record_path=None)
    (failed,) = [o for o in report.outcomes if o.status == "failed"]
    assert failed.example.name.endswith("page.md:23") and "-torch.Size([4])" in failed.detail
    verify([str(page)], devices=("cpu",), update=True, use_cache=False, record_path=None)
    assert subprocess.run([*git, "diff", "--exit-code"], capture_output=True).returncode == 0


SAMPLE_PAGE = """---
kind: guide
summary: s
tags: []
---

# Timing

```python nondeterministic="timings vary"
import time
start = time.perf_counter()
print(f"{time.perf_counter() - start:.9f} s")
```
"""


def test_nondeterministic_sample_is_written_with_provenance_and_goes_stale_with_its_code(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(SAMPLE_PAGE)
    opts = dict(devices=("cpu",), use_cache=False, record_path=None)
    (first,) = verify([str(page)], **opts).outcomes
    assert first.status == "failed" and first.reason == "has no sample output (run verify --update)"
    verify([str(page)], update=True, **opts)
    text = page.read_text()
    assert (
        '```output sample="CPU · ' in text and f" · torch {record.environment()['torch']}" in text and " code=" in text
    )
    assert verify([str(page)], **opts).failed == 0  # a sample is not compared: new timings still pass
    page.write_text(text.replace("print(f", "print('changed', f"))
    (stale,) = verify([str(page)], **opts).outcomes
    assert stale.status == "failed" and stale.reason.startswith("sample output was not measured with this code")
    verify([str(page)], update=True, **opts)
    assert verify([str(page)], **opts).failed == 0


def test_sample_measured_with_another_torch_release_fails_until_update_remeasures_it(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(SAMPLE_PAGE)
    opts = dict(devices=("cpu",), use_cache=False, record_path=None)
    verify([str(page)], update=True, **opts)
    current = record.environment()["torch"]
    old = page.read_text()
    assert f"torch {current}" in old
    page.write_text(old.replace(f"torch {current}", "torch 0.0.1+old"))
    (stale,) = verify([str(page)], **opts).outcomes
    assert stale.status == "failed" and stale.mismatch
    assert stale.reason == "sample output was measured with torch 0.0.1+old (run verify --update)"
    report = verify([str(page)], update=True, **opts)
    assert report.changes and f"torch {current}" in page.read_text() and "0.0.1" not in page.read_text()
    assert verify([str(page)], **opts).failed == 0
