"""The tool writes only where a path says, never where a symbolic link leads (paths.py), and names the link."""

import secrets
from pathlib import Path

import pytest

from handbook import ROOT
from handbook.lint.rules import lint
from handbook.verify.paths import UnsafePath
from handbook.verify.runner import verify

STALE = "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# Page\n\n```python\nprint(2)\n```\n\n```output\n1\n```\n"


@pytest.fixture
def link_in_the_repository(tmp_path):
    """A page in the repository that is a link to a file outside it."""
    target = tmp_path / "outside.md"
    target.write_text(STALE)
    link = ROOT / "tests" / "fixtures" / f"link-{secrets.token_hex(4)}.md"
    link.symlink_to(target)
    yield link, target
    link.unlink()


def test_update_never_writes_through_a_link_and_reports_the_link(link_in_the_repository):
    link, target = link_in_the_repository
    rel = link.relative_to(ROOT).as_posix()
    report = verify([str(link)], devices=("cpu",), update=True, use_cache=False, record_path=None)
    assert target.read_text() == STALE
    assert report.failed == 1 and not report.changes
    (line,) = report.unreadable
    assert line.startswith(f"{rel}:1: HB006 {rel} is a symbolic link (to {target})"), line
    assert str(target) not in line.split("(to ")[0]


def test_lint_names_the_link_not_its_target(link_in_the_repository):
    link, target = link_in_the_repository
    (finding,) = lint([str(link)])
    assert finding.code == "HB006" and finding.path == link.relative_to(ROOT).as_posix()


def test_a_folder_that_is_a_link_is_refused_too(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "page.md").write_text(STALE)
    folder = ROOT / "tests" / "fixtures" / f"linked-folder-{secrets.token_hex(4)}"
    folder.symlink_to(tmp_path / "elsewhere")
    try:
        report = verify([str(folder / "page.md")], devices=("cpu",), update=True, use_cache=False, record_path=None)
        assert (tmp_path / "elsewhere" / "page.md").read_text() == STALE
        assert report.unreadable and "HB006" in report.unreadable[0]
    finally:
        folder.unlink()


def test_a_lock_file_that_is_a_link_is_never_opened(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    record = tmp_path / "docs" / "verification.json"
    record.parent.mkdir()
    (record.parent / ".verification.json.lock").symlink_to(victim)
    page = record.parent / "page.md"
    page.write_text(STALE.replace("```output\n1\n```", "```output\n2\n```"))
    with pytest.raises(UnsafePath, match="symbolic link"):
        verify([str(page)], devices=("cpu",), use_cache=False, record_path=record)
    assert victim.read_text() == "precious"


def test_a_link_in_the_checkout_to_a_file_in_it_is_refused_as_well():
    target = ROOT / "tests" / "fixtures" / "verify" / "ok.md"
    link = ROOT / "tests" / "fixtures" / f"inner-link-{secrets.token_hex(4)}.md"
    link.symlink_to(target)
    before = target.read_bytes()
    try:
        report = verify([str(link)], devices=("cpu",), update=True, use_cache=False, record_path=None)
        assert report.unreadable and "HB006" in report.unreadable[0]
        assert target.read_bytes() == before
    finally:
        link.unlink()
    assert Path(link).exists() is False


def test_the_capability_cache_is_never_written_through_a_link(tmp_path):
    """machine.py keeps ATen's CPU capability in .handbook-cache/capability.json: a link there is not followed."""
    from handbook.verify import machine

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    folder = ROOT / "tests" / "fixtures" / f"cache-{secrets.token_hex(4)}"
    folder.mkdir()
    try:
        (folder / "capability.json").symlink_to(victim)
        machine.remember(folder / "capability.json", {"key": "AVX2"})
        assert victim.read_text() == "precious" and (folder / "capability.json").is_symlink()
        (folder / "capability.json").unlink()
        (folder / "linked").symlink_to(tmp_path)
        machine.remember(folder / "linked" / "sub" / "capability.json", {"key": "AVX2"})
        assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.txt"]
        machine.remember(folder / "capability.json", {"key": "AVX2"})  # a plain file is written
        assert '"AVX2"' in (folder / "capability.json").read_text()
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
