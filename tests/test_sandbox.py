"""Hostile pages: what an example must not be able to do, checked by inspecting the child and the machine after.

Each test is a line of the threat model in docs/contributing.md ("The sandbox: examples are untrusted code");
test_hostile.py runs the verifier as its own process against planted canaries. No test sends traffic anywhere but
loopback: the network namespace is checked by what the child sees (only `lo`).
"""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import processes_with

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


def _kill_all(marker: str) -> None:
    for pid in processes_with(marker):
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
        assert processes_with("987.65") == []
    finally:
        _kill_all("987.65")


def test_results_forged_through_gc_do_not_pass_the_page():
    """The page finds the runner's channel through gc (the old runner kept one) and reports "2 passed" for two
    failing examples, then leaves: both still fail."""
    report = run("forged.md")
    assert [o.status for o in report.outcomes] == ["failed", "failed"], [o.reason for o in report.outcomes]


def test_results_forged_over_the_pipes_void_the_page():
    """The page writes forged results to every pipe it holds: they carry no nonce of a request, so the page's
    results are void, as tampered."""
    report = run("forged_fds.md")
    outcomes = by_line(report)
    assert [o.status for o in report.outcomes] == ["failed", "failed"]
    assert outcomes[9].reason.startswith("tampered: the page wrote to the verifier's channel"), outcomes[9].reason


def test_a_20_mb_exception_message_fails_its_example_and_the_run_goes_on(page_file):
    page = page_file(
        "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# Huge\n\n```python\nraise ValueError('x' * 20_000_000)\n```\n"
        "\n```python\nprint('after')\n```\n\n```output\nafter\n```\n"
    )
    report = verify(
        [str(page), str(ROOT / "tests/fixtures/verify/ok.md")], devices=("cpu",), use_cache=False, record_path=None
    )
    huge = [o for o in report.outcomes if o.example.path.endswith("page.md")]
    assert [o.status for o in huge] == ["failed", "passed"], [(o.reason, o.detail[:200]) for o in huge]
    assert "[error cut: 200" in huge[0].detail and len(huge[0].detail) < 100_000
    assert report.failed == 1


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
        while not processes_with("876.541") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_with("876.541"), "the page never started its process"
        verifier.kill()
        verifier.wait()
        deadline = time.monotonic() + 10
        while processes_with("876.541") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_with("876.541") == []
    finally:
        verifier.kill()
        _kill_all("876.541")


def test_a_page_that_prints_without_end_fails_alone(page_file):
    page = page_file(
        "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# Flood\n\n" + "```python\nprint('x' * (1 << 20))\n```\n\n" * 70
    )
    report = verify(
        [str(page), str(ROOT / "tests/fixtures/verify/ok.md")], devices=("cpu",), use_cache=False, record_path=None
    )
    reasons = [o.reason for o in report.outcomes if o.example.path.endswith("page.md") and o.status == "failed"]
    assert "the page printed more than 64 MiB in all; its later results were not kept" in reasons
    assert all(o.status != "failed" for o in report.outcomes if "ok.md" in o.example.path)


def test_a_page_that_kills_its_process_group_is_reported_and_the_run_goes_on(tmp_path):
    """Inside its PID namespace `os.getppid()` is 0, so `os.kill(os.getppid(), 9)` signals the page's own process
    group: that must never be the verifier's, its caller's or its siblings'."""
    page = tmp_path / "kill.md"
    page.write_text(
        "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# Kill\n\n```python\nimport os\nos.kill(os.getppid(), 9)\n```\n"
    )
    marker = f"777.{os.getpid()}"
    script = (
        f"sleep {marker} >/dev/null 2>&1 & {sys.executable} -m handbook verify --no-cache --no-record --device cpu {page} "
        f"{ROOT / 'docs/guides/broadcasting.md'}; echo done $?"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))
    try:
        done = subprocess.run(["setsid", "bash", "-c", script], capture_output=True, text=True, env=env, timeout=600)
        assert "done 1" in done.stdout, (done.stdout[-2000:], done.stderr[-2000:])
        assert "kill.md:9 [cpu] crashed: killed by SIGKILL" in done.stdout
        assert "docs/guides/broadcasting.md [cpu]" in done.stdout and re.search(r"\n\d+ passed, 1 failed", done.stdout)
        assert processes_with(marker), "the caller's sibling was killed"
    finally:
        _kill_all(marker)


POISONER = """---
kind: guide
summary: s
tags: []
---

# Poisoner

```python timeout=900
import glob, os, tempfile, torch

print(torch.compile(lambda x: x * 2 + 1)(torch.ones(3)))
roots = [os.environ.get("TORCHINDUCTOR_CACHE_DIR"), tempfile.gettempdir(), "CHECKOUT/.handbook-cache"]
count = 0
for root in filter(None, roots):
    for path in glob.glob(os.path.join(root, "**", "*.py"), recursive=True):
        try:
            with open(path, "a") as f:
                f.write("\\nprint('POISONED BY AN EARLIER PAGE')\\n")
            count += 1
        except OSError:
            pass
print(count > 0)
```

```output
tensor([3., 3., 3.])
True
```
"""

VICTIM = """---
kind: guide
summary: s
tags: []
---

# Victim

```python timeout=900
import torch

print(torch.compile(lambda x: x * 2 + 1)(torch.ones(3)))
```

```output
tensor([3., 3., 3.])
```

```python
1 / 0
```
"""


def test_no_page_runs_code_another_page_left_in_a_compile_cache(tmp_path):
    """Page A compiles, then appends code to every compiled module it can find; page B, verified later, compiles
    the same function. B must run none of A's code (no compile cache is shared between pages)."""
    (tmp_path / "a.md").write_text(POISONER.replace("CHECKOUT", str(ROOT)))
    (tmp_path / "b.md").write_text(VICTIM)
    first = verify([str(tmp_path / "a.md")], devices=("cpu",), use_cache=False, record_path=None)
    assert first.failed == 0, [o.detail for o in first.outcomes]
    later = verify([str(tmp_path / "b.md")], devices=("cpu",), use_cache=False, record_path=None)
    compiled, failing = later.outcomes
    assert "POISONED" not in (compiled.actual or "") and compiled.status == "passed", compiled.detail
    assert failing.status == "failed" and "ZeroDivisionError" in failing.detail


def test_a_secret_never_reaches_the_record(tmp_path, monkeypatch):
    """A machine= output holding the value of a hidden variable (here a short one, under a secret's name) is not
    recorded: the record is committed. (The page can only print it because the test wrote it into the page.)"""
    monkeypatch.setenv("HANDBOOK_TEST_API_KEY", "k3y9")
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "p.md"
    page.write_text(
        "---\nkind: guide\nsummary: s\ntags: []\n---\n\n# P\n\n```python machine=\"test\"\nprint('k3' + 'y9')\n```\n"
    )
    record = docs / "verification.json"
    report = verify([str(page)], devices=("cpu",), use_cache=False, record_path=record)
    assert "k3y9" not in record.read_text()
    assert report.refusals and "not recorded" in report.refusals[0]


def test_the_sandbox_fails_closed_on_a_writable_mount():
    from handbook.verify import rootfs

    mountinfo = (
        "22 27 0:21 / /proc ro,relatime - proc proc rw\n"
        "27 1 254:0 / / ro,relatime - ext4 /dev/vda rw\n"
        "30 27 0:27 / /tmp rw,relatime - tmpfs tmpfs rw\n"
        "31 27 254:0 /work /work rw,relatime - ext4 /dev/vda rw\n"
    )
    with pytest.raises(rootfs.RootError, match="writable mounts: /work"):
        rootfs.check_read_only(mountinfo, writable=rootfs.WRITABLE)
    rootfs.check_read_only(mountinfo.replace("/work rw,", "/work ro,"), writable=rootfs.WRITABLE)


def test_a_failed_read_only_remount_stops_the_build_of_the_root():
    """The remount that makes a bind read-only fails: building the root raises, it never goes on writable."""
    from handbook.verify import kernel, rootfs

    pid = os.fork()
    if pid == 0:
        real = kernel.mount

        def failing(source, target, fstype, flags, data=None):
            if flags & kernel.MS_REMOUNT and target.endswith("/usr"):
                raise OSError(1, "refused by the test")
            return real(source, target, fstype, flags, data)

        kernel.mount = failing
        try:
            rootfs.enter_base_root()
        except rootfs.RootError as exc:
            os._exit(0 if "read-only" in str(exc) and "/usr" in str(exc) else 2)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_when_the_root_cannot_be_built_every_page_fails_with_the_reason(monkeypatch):
    from handbook.verify import warm

    process = warm.process()
    process.ready()
    monkeypatch.setattr(process, "info", {"label": "x", "error": "the pages' sandbox could not be built: test"})
    report = run("../verify/ok.md")
    failed = [o for o in report.outcomes if o.status == "failed"]
    assert report.count("passed") == 0 and len(failed) == 3
    assert failed[0].reason == "the pages' sandbox could not be built: test"
    assert all(o.reason.startswith("not run: the page's process stopped at") for o in failed[1:])


def test_a_cgroup_that_cannot_be_removed_is_reported(capsys):
    from handbook.verify.cells import Cgroups

    cgroups = Cgroups(sandbox.support())
    name = cgroups.make(None)
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        cgroups.join(name, sleeper.pid)
        problems = cgroups.remove(name, wait=0.05)
        assert problems and all("Device or resource busy" in p for p in problems), problems
    finally:
        sleeper.kill()
        sleeper.wait()
        assert cgroups.remove(name) == []
