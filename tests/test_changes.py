"""The changes report (changes.py): comparing two runs, the schema, the committed report and its generated page."""

import json
from pathlib import Path

import jsonschema
import pytest

from handbook import DOCS
from handbook.releases import changes
from handbook.verify.document import parse_page

FIXTURES = Path(__file__).parent / "fixtures" / "changes"


def row(name, actual, status="passed", reason="", detail="", code="0123456789"):
    return {
        "name": name,
        "device": "cpu",
        "status": status,
        "reason": reason,
        "code": code,
        "expected": "",
        "actual": actual,
        "detail": detail,
    }


OLD_ROWS = [
    row("docs/torch/mm.md:94", "RuntimeError: self must be a matrix"),
    row("docs/torch/clamp.md:111", "tensor([255, 255, 255], dtype=torch.uint8)"),
    row("docs/torch/x.md:5", "UserWarning: Starting in PyTorch 2.9, this will raise"),
    row("docs/torch/same.md:3", "tensor([1, 2])"),
    row("docs/torch/timing.md:9", "0.5 ms", reason="nondeterministic"),
    row("docs/torch/opt.md:7", "ok"),
]
NEW_ROWS = [
    row("docs/torch/mm.md:94", "RuntimeError: mm: self must be a matrix, got 3-D tensor"),
    row("docs/torch/clamp.md:111", "tensor([1, 2, 3], dtype=torch.uint8)"),
    row("docs/torch/x.md:5", "UserWarning: In a future release, this will raise"),
    row("docs/torch/same.md:3", "tensor([1, 2])"),
    row("docs/torch/timing.md:9", "0.7 ms", reason="nondeterministic"),
    row(
        "docs/torch/opt.md:7",
        "ok",
        status="failed",
        reason="undeclared warning (declare it with warns=FutureWarning):",
        detail="undeclared warning (declare it with warns=FutureWarning):\nFutureWarning: use a list",
    ),
]


def surface(version, apis, modules):
    return {"torch": version, "torchvision": "0.1", "apis": apis, "modules": modules}


def write_run(folder: Path, rows, lint, surf):
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"environment": {}, "examples": rows}))
    (folder / "lint.txt").write_text("\n".join(lint) + ("\n" if lint else ""))
    (folder / "surface.json").write_text(json.dumps(surf))


@pytest.fixture
def runs(tmp_path):
    old_surface = surface(
        "1.0.0",
        {"torch.mm": {"parameters": ["input", "mat2", "out"]}, "torch.gone": {"parameters": ["x"]}},
        {"torch": ["gone", "mm"]},
    )
    new_surface = surface(
        "1.1.0+cpu",
        {"torch.mm": {"parameters": ["input", "mat2", "out_dtype"]}, "torch.gone": None},
        {"torch": ["foreach", "mm"]},
    )
    old_lint = ["docs/torch/a.md:3: HB030 some old finding"]
    new_lint = [
        "docs/torch/a.md:9: HB030 some old finding",
        "docs/torch/ddp.md:27: HB032 parameter 'lazy' undocumented",
    ]
    write_run(tmp_path / "old", OLD_ROWS, old_lint, old_surface)
    write_run(tmp_path / "new", NEW_ROWS, new_lint, new_surface)
    return tmp_path / "old", tmp_path / "new"


def test_compare_finds_each_kind_of_change_and_nothing_else(runs):
    report = changes.compare(*runs)
    changes.validate(report)
    by_kind = {}
    for e in report["entries"]:
        by_kind.setdefault(e["kind"], []).append(e)
    assert [e["example"] for e in by_kind["error-text"]] == ["docs/torch/mm.md:94"]
    assert [e["example"] for e in by_kind["behaviour"]] == ["docs/torch/clamp.md:111"]
    warned = {e["example"]: e for e in by_kind["warning"]}
    assert set(warned) == {"docs/torch/x.md:5", "docs/torch/opt.md:7"}
    assert warned["docs/torch/opt.md:7"]["old_status"] == "passed"
    assert warned["docs/torch/opt.md:7"]["new_status"] == "failed"
    assert "FutureWarning" in warned["docs/torch/opt.md:7"]["new_output"]
    clamp = by_kind["behaviour"][0]
    assert clamp["page"] == "torch/clamp.md" and clamp["line"] == 111 and "255" in clamp["old_output"]
    params = {(e["parameter"], e["change"]) for e in by_kind["parameter"]}
    assert params == {("out_dtype", "added"), ("out", "removed")}
    assert [(e["api"], e["change"]) for e in by_kind["api"]] == [("torch.gone", "removed")]
    assert [(e["api"], e["change"]) for e in by_kind["new-api"]] == [("torch.foreach", "added")]
    assert [e["finding"] for e in by_kind["lint"]] == ["docs/torch/ddp.md:27: HB032 parameter 'lazy' undocumented"]
    assert report["counts"]["behaviour"] == 1 and sum(report["counts"].values()) == len(report["entries"]) == 9
    assert report["old"]["torch"] == "1.0.0" and report["new"]["torch"] == "1.1.0+cpu"


def test_a_run_compared_with_itself_reports_no_change(runs):
    old, _ = runs
    report = changes.compare(old, old)
    assert report["entries"] == [] and sum(report["counts"].values()) == 0
    assert "0 change(s): no change." in changes.markdown(report)


def test_reversed_comparison_reports_the_same_changes_the_other_way(runs):
    forward, backward = changes.compare(*runs), changes.compare(*reversed(runs))
    pairs = {(e["example"], e["old_output"], e["new_output"]) for e in forward["entries"] if "example" in e}
    back = {(e["example"], e["new_output"], e["old_output"]) for e in backward["entries"] if "example" in e}
    assert pairs == back
    added = {(e["api"], e.get("parameter")) for e in forward["entries"] if e.get("change") == "added"}
    removed = {(e["api"], e.get("parameter")) for e in backward["entries"] if e.get("change") == "removed"}
    assert added == removed


def test_markdown_summary_shows_old_and_new_output(runs):
    text = changes.markdown(changes.compare(*runs))
    assert text.startswith("# Changes: torch 1.0.0 → torch 1.1.0")
    assert "RuntimeError: self must be a matrix" in text and "RuntimeError: mm: self must be a matrix" in text
    assert "## Behaviour" in text and "`docs/torch/clamp.md:111`" in text and "new parameter `out_dtype`" in text


@pytest.mark.parametrize(
    "old, new, kind",
    [
        ("RuntimeError: a", "NotImplementedError: a", "error-text"),
        ("x\nValueError: b", "x\nRuntimeError: c", "error-text"),
        ("tensor([1])", "tensor([2])", "behaviour"),
        ("tensor([1])\nRuntimeError: a", "tensor([2])\nRuntimeError: a", "behaviour"),
        ("UserWarning: a", "UserWarning: b", "warning"),
    ],
)
def test_classify(old, new, kind):
    assert changes.classify(old, new) == kind


def test_schema_rejects_a_malformed_report():
    bad = json.loads((FIXTURES / "bad_report.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        changes.validate(bad)


def test_noise_is_version_strings_and_traceback_markers_only():
    same = {"old_output": "torch: 2.14.1+cu130\n  ^^^^\nok", "new_output": "torch: 2.15.0+cu132\nok"}
    assert changes.noise(same)
    assert not changes.noise({"old_output": "tensor([255])", "new_output": "tensor([1])"})


def test_a_change_is_one_line_with_the_changed_words_marked():
    entry = {"kind": "error-text", "page": "torch/mm.md", "line": 3, "old_output": "RuntimeError: self must be a matrix",
             "new_output": "RuntimeError: mm: self must be a matrix, got 3-D tensor"}  # fmt: skip
    line = changes._line(entry, lambda e: "[torch.mm](../torch/mm.md#example-3)")
    assert line.startswith("- [torch.mm](../torch/mm.md#example-3): the error message changed: ")
    assert "<ins>mm: self</ins>" in line or "<ins>mm:</ins>" in line
    assert "<ins>matrix, got 3-D tensor</ins>" in line and "<del>matrix</del>" in line and "\n" not in line


# -- the committed report: what the site's What-changed page is generated from --------------------------------


@pytest.fixture(scope="module")
def committed():
    reports = changes.committed()
    assert reports, "no committed report under changes/"
    return reports


def test_committed_reports_follow_the_schema(committed):
    for report in committed:
        changes.validate(report)


def test_committed_report_entries_name_examples_that_exist_now(committed):
    """An entry's example is found again by its code; one rewritten since (the claims audit) links its page only."""
    found = 0
    for report in committed:
        for entry in changes.resolved(report):
            if entry.get("page"):
                assert (DOCS / entry["page"]).exists(), entry["page"]
            if entry.get("code") and entry["line"] is not None:
                ex = next(e for e in parse_page(DOCS / entry["page"]).examples if e.line == entry["line"])
                assert ex.code_hash == entry["code"]
                found += 1
    assert found >= 10


def test_generated_page_links_at_least_20_entries_to_handbook_pages(committed):
    report = committed[0]
    text = changes.page(report)
    new = changes.version(report, "new")
    assert text.startswith(f"# What changed in torch {new}")
    links = [line for line in text.split("\n") if line.startswith("- ") and "](../" in line]
    assert len(links) >= 20
    for heading in ("## New APIs and parameters", "## Behaviour changes", "## Error messages"):
        assert heading in text
    assert "<del>" in text and "<ins>" in text and "docs/" not in text.split("\n", 3)[3]  # no source paths shown
    assert "differ only in version strings" in text  # the installation guide's version lines are left out
    assert not any("installation-and-environment" in line for line in links)


def test_note_links_back_from_a_named_page(committed):
    report = committed[0]
    rel, entries = next(iter(changes.notes(report).items()))
    note = changes.note(report, rel, entries)
    target = "../" * rel.count("/") + changes.page_path(report)
    assert f"]({target})" in note and note.startswith('!!! info "Changed in torch')


def test_home_page_links_the_newest_what_changed_page(committed):
    text = (DOCS / "index.md").read_text()
    out = changes.home_link(text, committed[0])
    assert f"]({changes.page_path(committed[0])})" in out and out.count("## Start here") == 1
    assert out.index(changes.page_path(committed[0])) > out.index("## Start here")


def test_surface_members_leave_out_what_a_module_merely_imported():
    import enum
    import functools

    import torch

    assert changes._ours(torch.nn.Linear) and changes._ours(torch.nn.functional) and changes._ours(torch.cat)
    assert not changes._ours(enum.Enum) and not changes._ours(functools.cache) and not changes._ours(json)
    assert changes._what(torch.nn) == "module" and changes._what(torch.nn.Linear) == "class"
    assert changes._what(torch.cat) == "callable" and changes._what(torch.float32) == "value"
