"""A page is never lost or damaged: unreadable pages, unclosed fences, edits during --update, modes, line
endings, huge or secret outputs, and lint that never imports what a page names."""

import os
import sys
from pathlib import Path

from handbook.lint.rules import lint, lint_page
from handbook.verify.document import parse_page
from handbook.verify.runner import verify

FRONT = "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# Page\n\n"


def _update(page: Path, **kwargs):
    return verify([str(page)], devices=("cpu",), update=True, use_cache=False, record_path=None, **kwargs)


def test_update_leaves_the_prose_after_an_unclosed_fence_intact(tmp_path):
    page = tmp_path / "p.md"
    text = FRONT + '```python\nprint("new")\n```\n\n```output\nold\n\n## After\n\nProse that must stay.\n'
    page.write_text(text)
    (finding,) = lint_page(parse_page(page))
    assert (finding.line, finding.code) == (13, "HB065")
    report = _update(page)
    assert page.read_text() == text
    assert report.failed and any("not updated: HB065" in r for r in report.refusals)


def test_a_non_utf8_page_is_a_finding_with_its_line_and_the_other_pages_are_still_checked(tmp_path):
    (tmp_path / "bad.md").write_bytes(FRONT.encode() + b"line 9\nline \xff10\n")
    (tmp_path / "good.md").write_text(FRONT + "```python\nprint(1)\n```\n\n```output\n2\n```\n")
    findings = [str(f) for f in lint([str(tmp_path)])]
    assert any(f.endswith("bad.md:10: HB005 page is not valid UTF-8 (invalid start byte at byte 61)") for f in findings)
    report = verify([str(tmp_path)], devices=("cpu",), use_cache=False, record_path=None)
    assert len(report.unreadable) == 1 and "bad.md:10: HB005" in report.unreadable[0]
    (outcome,) = report.outcomes  # good.md still ran (and fails: it prints 1)
    assert outcome.example.path.endswith("good.md") and outcome.status == "failed"


def test_update_keeps_mode_and_line_endings(tmp_path):
    page = tmp_path / "p.md"
    page.write_bytes(
        (FRONT + '```python\nprint("new")\n```\n\n```output\nold\n```\n\nEnd.\n').replace("\n", "\r\n").encode()
    )
    page.chmod(0o664)
    report = _update(page)
    assert report.changes and not report.refusals
    data = page.read_bytes()
    assert b"\r\nnew\r\n" in data and data.count(b"\n") == data.count(b"\r\n")
    assert page.stat().st_mode & 0o777 == 0o664


def test_update_does_not_write_over_an_edit_made_while_it_ran(tmp_path, monkeypatch):
    import handbook.verify.runner

    page = tmp_path / "p.md"
    page.write_text(FRONT + '```python\nprint("new")\n```\n\n```output\nold\n```\n')
    edited = page.read_text() + "\nAn edit made while --update ran.\n"
    real = handbook.verify.runner.write_page

    def edit_first(p, text):  # the examples cannot reach the page (read-only): the edit comes from outside
        page.write_text(edited)
        return real(p, text)

    monkeypatch.setattr(handbook.verify.runner, "write_page", edit_first)
    report = _update(page)
    assert page.read_text() == edited
    assert any("changed since it was read" in r for r in report.refusals) and not report.changes


def test_update_never_writes_a_huge_block_or_a_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("HANDBOOK_TEST_TOKEN", "tok-1234567890-secret")
    page = tmp_path / "p.md"
    code = 'print("x" * 70000)\n```\n\n```python\nprint("tok-1234567890" + "-secret")\n```\n'
    text = FRONT + "```python\n" + code
    page.write_text(text)
    report = _update(page)
    assert page.read_text() == text and not report.changes
    assert len(report.refusals) == 2
    assert "over the 65536-byte limit" in report.refusals[0]
    assert "environment variables" in report.refusals[1] and "secret" not in report.refusals[1]
    small = _update(page, block_limit=100)
    assert "over the 100-byte limit" in small.refusals[0]


def test_lint_looks_api_names_up_only_in_torch_and_imports_nothing_else(tmp_path, monkeypatch):
    (tmp_path / "planted_module.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('ran')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("os.system", "planted_module.x"):
        page = tmp_path / "p.md"
        page.write_text(f"---\nkind: api\napi: {name}\nsummary: s\ntags: []\n---\n\n# {name}\n")
        codes = {f.code for f in lint_page(parse_page(page)) if f.code == "HB030"}
        assert codes == {"HB030"}, name
    assert not (tmp_path / "ran").exists() and "planted_module" not in sys.modules


def test_record_and_cache_files_keep_the_usual_mode(tmp_path):
    from handbook.verify.record import write_atomic

    new = tmp_path / "new.json"
    umask = os.umask(0o022)
    try:
        write_atomic(new, "{}")
    finally:
        os.umask(umask)
    assert new.stat().st_mode & 0o777 == 0o644
