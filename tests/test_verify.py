"""The verifier on fixture pages: passing pages, every kind of worker fault, raises/warns, network, memory."""

from pathlib import Path

import pytest

from handbook.verify.runner import NO_GPU, verify

PAGES = Path(__file__).parent / "fixtures" / "verify"


def run(*names, **kwargs):
    kwargs.setdefault("devices", ("cpu",))
    kwargs.setdefault("use_cache", False)
    kwargs.setdefault("record_path", None)
    return verify([str(PAGES / n) for n in names], **kwargs)


def by_line(report, device="cpu"):
    return {o.example.line: o for o in report.outcomes if o.device == device}


def test_passing_page_shares_state_and_is_seeded():
    report = run("ok.md")
    outcomes = by_line(report)
    assert [outcomes[n].status for n in (9, 20, 28)] == ["passed"] * 3, [o.detail for o in report.outcomes]
    assert outcomes[36].status == "skipped" and outcomes[36].reason == "devices=cuda"
    assert outcomes[40].status == "skipped" and outcomes[40].reason == "skip: shown, not run"
    assert report.failed == 0


def test_cuda_pass_without_gpu_is_a_skip_with_its_reason():
    report = run("ok.md", devices=("cpu", "cuda"))
    cuda = by_line(report, "cuda")
    assert {o.reason for o in cuda.values() if o.status == "skipped"} == {NO_GPU, "skip: shown, not run"}
    assert not any(o.status == "passed" for o in cuda.values())


def test_segfault_fails_that_page_only():
    report = run("crash_segfault.md", "ok.md")
    outcomes = [o for o in report.outcomes if "crash_segfault" in o.example.path]
    assert [o.status for o in outcomes] == ["passed", "failed", "failed"]
    assert "crashed: killed by SIGSEGV" in outcomes[1].reason
    assert "not run: the page's process stopped at" in outcomes[2].reason
    assert outcomes[2].reason.endswith("crash_segfault.md:17")
    assert all(o.status != "failed" for o in report.outcomes if "ok.md" in o.example.path)


def test_exit_and_kill_are_reported():
    report = run("crash_exit.md", "crash_kill.md")
    reasons = {Path(o.example.path).name: o.reason for o in report.outcomes}
    assert reasons["crash_exit.md"] == "the page's process exited with code 3 before finishing"
    assert reasons["crash_kill.md"] == "crashed: killed by SIGKILL (out of memory?)"


def test_hang_times_out():
    report = run("hang.md")
    (outcome,) = report.outcomes
    assert outcome.status == "failed" and outcome.reason == "timed out after 1 s"
    assert report.jobs[0].wall_seconds < 20


def test_undeclared_and_missing_warnings_fail():
    outcomes = by_line(run("warnings.md"))
    assert outcomes[9].status == "failed"
    assert "undeclared warning (declare it with warns=DeprecationWarning)" in outcomes[9].reason
    assert "this API is going away" in outcomes[9].detail
    assert outcomes[14].status == "failed" and "expected a UserWarning" in outcomes[14].reason
    assert outcomes[22].status == "passed"


def test_network_is_blocked_but_loopback_works():
    outcomes = by_line(run("network.md"))
    assert outcomes[9].status == "failed" and "network access is blocked" in outcomes[9].detail
    assert outcomes[14].status == "failed" and "network access is blocked" in outcomes[14].detail
    assert outcomes[19].status == "passed"


def test_memory_limit_turns_a_huge_allocation_into_an_error():
    outcomes = by_line(run("memory.md", memory_limit=6 * 2**30))
    assert outcomes[9].status == "passed", outcomes[9].detail
    assert "memory" in outcomes[9].actual.lower()
    assert outcomes[18].status == "passed"


def test_raises():
    outcomes = by_line(run("raises.md"))
    assert outcomes[9].status == "passed"
    assert outcomes[17].status == "failed" and "expected KeyError to be raised" in outcomes[17].reason
    assert outcomes[21].status == "failed" and outcomes[21].reason == "expected KeyError, got ValueError:"
    assert outcomes[25].status == "failed"
    assert outcomes[25].reason.endswith('raises.md", line 26, in <module>')
    assert "NameError: name 'undefined_name' is not defined" in outcomes[25].detail


def test_output_mismatch_reports_path_line_and_diff(tmp_path):
    page = tmp_path / "p.md"
    page.write_text((PAGES / "ok.md").read_text().replace("tensor([0., 2., 4., 6.])", "tensor([0., 2., 4., 7.])"))
    report = verify([str(page)], devices=("cpu",), use_cache=False, record_path=None)
    (failed,) = [o for o in report.outcomes if o.status == "failed"]
    assert failed.example.name.endswith("p.md:20") and failed.reason == "output differs"
    assert "-tensor([0., 2., 4., 7.])" in failed.detail and "+tensor([0., 2., 4., 6.])" in failed.detail


def test_summary_line(capsys):
    from handbook.cli import main

    assert main(["verify", "--device", "cpu", "--no-cache", "--no-record", str(PAGES / "raises.md")]) == 1
    out = capsys.readouterr().out
    assert "FAILED " in out and "raises.md:17 [cpu]" in out
    assert out.rstrip().split("\n")[-1] == "1 passed, 3 failed, 0 skipped"


@pytest.mark.parametrize("jobs", [1, 2])
def test_jobs_do_not_change_results(jobs):
    report = run("ok.md", "raises.md", "warnings.md", jobs=jobs)
    assert (report.count("passed"), report.failed) == (5, 5)


def test_terminal_escape_codes_are_not_part_of_the_output(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        '---\nkind: guide\n---\n\n# T\n\n```python\nprint("\\x1b[1mbold\\x1b[0m text")\n```\n\n```output\nbold text\n```\n'
    )
    (outcome,) = verify([str(page)], devices=("cpu",), use_cache=False, record_path=None).outcomes
    assert outcome.status == "passed" and outcome.actual == "bold text\n"


def test_addresses_and_the_temp_folder_are_written_stably(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("---\nkind: guide\n---\n\n# T\n\n```python\nimport os\nprint(object(), os.getcwd())\n```\n")
    verify([str(page)], devices=("cpu",), update=True, use_cache=False, record_path=None)
    assert "<object object at 0x...> <page folder>" in page.read_text()
    assert verify([str(page)], devices=("cpu",), use_cache=False, record_path=None).failed == 0


def test_tracebacks_name_the_lines_of_the_page_in_nested_code_and_syntax_errors():
    outcomes = by_line(run("lines.md"))
    assert outcomes[8].status == "passed"
    nested = outcomes[12]
    assert nested.actual.startswith("18\n")  # the line of `raise` inside a method, as the page numbers it
    assert 'lines.md", line 25, in <module>' in nested.detail and 'lines.md", line 14, in f' in nested.detail
    syntax = outcomes[28].detail
    assert 'lines.md", line 29' in syntax and "y = (" in syntax and "SyntaxError" in syntax


def test_without_the_kernel_sandbox_it_says_so_once_and_pages_still_run(monkeypatch, capsys):
    from handbook.verify import sandbox

    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    found = sandbox.support.__wrapped__()
    assert not found.namespaces and not found.cgroups
    assert "not running as root" in found.missing[0]
    assert capsys.readouterr().err.count("WARNING: the page sandbox is not available") == 1
    monkeypatch.setattr(sandbox, "support", lambda: found)
    report = run("ok.md")
    assert report.failed == 0 and report.count("passed") == 3
