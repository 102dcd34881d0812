"""Hostile pages: what an example must not be able to do, checked by inspecting the child and the machine after.

No test sends traffic anywhere: the network namespace is checked by what the child sees (only `lo`).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from handbook import ROOT
from handbook.verify import sandbox
from handbook.verify.runner import verify

PAGES = Path(__file__).parent / "fixtures" / "sandbox"
pytestmark = pytest.mark.skipif(not sandbox.support().full, reason="the kernel sandbox is not available here")


def run(*names, **kwargs):
    kwargs.setdefault("devices", ("cpu",))
    kwargs.setdefault("use_cache", False)
    kwargs.setdefault("record_path", None)
    return verify([str(PAGES / n) for n in names], **kwargs)


def by_line(report):
    return {o.example.line: o for o in report.outcomes}


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _kill_all(marker: str) -> None:
    for pid in _processes_with(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_page_cannot_write_outside_its_own_folder():
    victim = PAGES / "victim.txt"
    victim.write_text("original\n")
    victim.chmod(0o644)
    planted = [ROOT / "docs" / "planted-by-a-page.md", ROOT / "planted-by-a-page.md", Path("/etc/planted-by-a-page")]
    tool = Path(sandbox.__file__).with_name("__init__.py")
    tool_before = tool.read_bytes()
    try:
        report = run("writes.md")
        (outcome,) = report.outcomes
        assert outcome.status == "passed", outcome.detail or outcome.actual
        assert "SUCCEEDED" not in outcome.actual
        assert victim.read_text() == "original\n" and victim.stat().st_mode & 0o777 == 0o644
        assert not any(p.exists() for p in planted)
        assert tool.read_bytes() == tool_before
        assert not Path("/tmp/handbook-sandbox-probe").exists()  # the page's /tmp was its own
    finally:
        victim.unlink(missing_ok=True)
        for p in planted:
            p.unlink(missing_ok=True)
        Path("/tmp/handbook-sandbox-probe").unlink(missing_ok=True)


def test_the_child_sees_only_loopback_no_secret_no_other_process_and_has_no_capabilities(monkeypatch):
    monkeypatch.setenv("HANDBOOK_TEST_SECRET", "s3cret-value-for-the-test")
    monkeypatch.setenv("SOME_TOKEN", "s3cret-token-for-the-test")
    report = run("inspect.md")
    assert report.failed == 0, [(o.reason, o.detail) for o in report.outcomes if o.status == "failed"]
    assert not any("s3cret" in (o.actual or "") for o in report.outcomes)


def test_no_process_outlives_the_page():
    try:
        report = run("processes.md")
        assert report.failed == 0, [o.detail for o in report.outcomes]
        assert _processes_with("987.65") == []
    finally:
        _kill_all("987.65")


def test_a_forged_result_fails_the_page_as_tampered():
    report = run("forged.md")
    outcomes = by_line(report)
    assert [o.status for o in report.outcomes] == ["failed", "failed"]
    assert outcomes[9].reason.startswith("tampered: the page wrote to the verifier's channel")


def test_output_of_fd_1_and_subprocesses_is_captured_and_huge_output_is_cut():
    outcomes = by_line(run("output.md"))
    assert outcomes[9].status == "passed", outcomes[9].detail
    huge = outcomes[29]
    assert huge.status == "failed" and huge.reason == "prints output but has no output block"
    assert len(huge.actual) < 2 * 2**20 and "[output cut:" in huge.actual
    assert len(huge.detail) < 20_000


def test_memory_cap_covers_the_children_of_a_page(tmp_path):
    page = tmp_path / "children.md"
    page.write_text(
        "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# Children\n\n```python\n"
        "import subprocess, sys\n"
        "code = 'import time; x = b\"x\" * (400 * 2**20); time.sleep(2)'\n"
        "children = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(3)]\n"
        "print([c.wait() for c in children])\n"
        "```\n\n```output\n[0, 0, 0]\n```\n"
    )
    report = verify([str(page)], devices=("cpu",), use_cache=False, record_path=None, memory_limit=768 * 2**20)
    (outcome,) = report.outcomes
    # 1.2 GB in all against a 768 MB cap: some process of the page is killed, though each stays under it.
    assert outcome.status == "failed", outcome.actual


def test_a_killed_verifier_takes_its_pages_processes_with_it(tmp_path):
    page = tmp_path / "hang.md"
    page.write_text(
        "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# Hang\n\n```python timeout=120\n"
        "import subprocess, time\n"
        "subprocess.Popen(['sleep', '876.541'], start_new_session=True)\n"
        "time.sleep(100)\n"
        "```\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
    verifier = subprocess.Popen(
        [sys.executable, "-m", "handbook", "verify", "--no-record", "--no-cache", "--device", "cpu", str(page)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not _processes_with("876.541") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_with("876.541"), "the page never started its process"
        verifier.kill()
        verifier.wait()
        deadline = time.monotonic() + 10
        while _processes_with("876.541") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_with("876.541") == []
    finally:
        verifier.kill()
        _kill_all("876.541")


def test_a_checkout_under_tmp_keeps_tmp_readable_and_gives_the_page_its_own_temp_folder(monkeypatch):
    """A clone (or venv) in /tmp must stay visible to the page: /tmp then turns read-only, TMPDIR is the page's."""
    if not sandbox.support().namespaces:
        pytest.skip("no kernel sandbox on this machine")
    monkeypatch.setattr(sandbox, "private_tmp", lambda: False)
    report = verify([str(PAGES / "tmp.md")], devices=("cpu",), use_cache=False, record_path=None)
    assert report.failed == 0, [o.detail for o in report.outcomes]
    assert not os.path.exists("/tmp/planted-by-a-page")
