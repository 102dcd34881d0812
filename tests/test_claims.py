"""Claim checks (```check```), relations declared on timing blocks, and honest labels for what did not run."""

import shutil
from pathlib import Path

import pytest

from handbook.site import coverage, render
from handbook.verify import record
from handbook.verify.document import parse_page
from handbook.verify.fences import FenceError, parse_options
from handbook.verify.runner import print_report, verify

CLAIMS = Path(__file__).parent / "fixtures" / "claims"
TORCH = record.environment()["torch"].split("+")[0]


def run(page: Path, **kwargs):
    kwargs.setdefault("devices", ("cpu",))
    kwargs.setdefault("use_cache", False)
    kwargs.setdefault("record_path", None)
    return verify([str(page)], **kwargs)


def test_a_check_that_no_longer_holds_fails_verify_with_path_line(capsys):
    report = run(CLAIMS / "checks.md")
    status = {o.example.line: o.status for o in report.outcomes}
    # 11, 21, 27 hold (27 reads `w`, defined by the check at 11: one namespace per page); 33 is the false claim,
    # 40 prints, 46 declares raises= but does not raise.
    assert status == {11: "passed", 21: "passed", 27: "passed", 33: "failed", 40: "failed", 46: "failed"}
    failed = {o.example.line: o for o in report.outcomes if o.status == "failed"}
    assert failed[33].reason == "check failed: AssertionError"
    assert "Zero weights are never drawn" in failed[33].detail  # the report quotes the claim
    assert "prints nothing" in failed[40].reason
    assert "expected RuntimeError to be raised" in failed[46].reason
    print_report(report, ("cpu",))
    out = capsys.readouterr().out
    assert "FAILED tests/fixtures/claims/checks.md:33 [cpu] check failed: AssertionError" in out


def test_a_check_has_no_output_block_and_no_sample_options(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("---\nkind: guide\n---\n\n# p\n\n```check\nassert True\n```\n\n```output\nx\n```\n")
    assert [p.code for p in parse_page(page).problems] == ["HB061"]
    for words in (["nondeterministic=x"], ["machine=x"], ["relation=a<b"]):
        with pytest.raises(FenceError, match="a check takes no"):
            parse_options(words, "check")


def test_relation_belongs_to_a_measured_block_and_is_one_expression():
    with pytest.raises(FenceError, match="measured block"):
        parse_options(["relation=a < b"])
    with pytest.raises(FenceError, match="one Python expression"):
        parse_options(["nondeterministic=t", "relation=a <"])
    assert parse_options(["nondeterministic=t", "relation=a < b"]).relation == "a < b"


def test_update_writes_a_sample_whose_relation_holds(tmp_path):
    page = tmp_path / "relation.md"
    shutil.copy(CLAIMS / "relation.md", page)
    report = run(page, update=True)
    assert report.failed == 0, [o.detail for o in report.outcomes]
    text = page.read_text()
    assert '```output sample="CPU · ' in text and "loop slower than once: True" in text
    assert run(page).failed == 0


def test_update_refuses_a_sample_that_contradicts_its_sentence(tmp_path):
    page = tmp_path / "contradicted.md"
    shutil.copy(CLAIMS / "contradicted.md", page)
    before = page.read_text()
    report = run(page, update=True)
    (outcome,) = report.outcomes
    assert outcome.status == "failed" and "contradicts the page" in outcome.reason
    assert "times = {" in outcome.reason  # the measured values are shown
    assert page.read_text() == before and not report.changes  # nothing was recorded


def test_measure_rewrites_every_sample_and_the_relation_is_part_of_its_hash(tmp_path):
    page = tmp_path / "relation.md"
    shutil.copy(CLAIMS / "relation.md", page)
    run(page, update=True)
    sampled = page.read_text()
    page.write_text(sampled.replace("loop slower than once: True", "typed by hand"))
    assert run(page).failed == 0  # a sample is not compared...
    again = run(page, update=True, measure=True)
    assert again.failed == 0 and again.changes  # ...but --measure measures every sample again and writes it
    assert page.read_text() == sampled
    # Another relation on the same code: the sample no longer belongs to the block.
    page.write_text(sampled.replace("relation=\"times['loop'] > times['once']\"", "relation=\"times['loop'] > 0\""))
    (outcome,) = run(page).outcomes
    assert outcome.status == "failed" and "not measured with this code" in outcome.reason


def test_a_false_relation_on_a_machine_block_fails_every_verify(tmp_path):
    page = tmp_path / "m.md"
    page.write_text(
        '---\nkind: guide\n---\n\n# m\n\n```python machine="hardware" relation="fast > slow"\nfast, slow = 1, 2\n```\n'
    )
    (outcome,) = run(page).outcomes
    assert outcome.status == "failed" and "relation 'fast > slow' is false (fast = 1; slow = 2)" in outcome.reason


CHECK_PAGE = """---
kind: guide
summary: s
tags: []
---

# A page

A claim.

```check
assert 1 + 1 == 2
```

- `x` — a GPU claim.

  ```check devices=cuda
  assert torch.cuda.is_available()
  ```

## Examples

```python devices=cuda
print(torch.ones(1, device="cuda"))
```

```python
print(1)
```

```output
1
```
"""


def _verified(page, tmp_path):
    rec = tmp_path / "docs" / "verification.json"
    verify([str(page)], devices=("cpu",), use_cache=False, record_path=rec)
    return record.load(rec)


def test_checks_render_collapsed_with_how_we_know_and_not_run_blocks_are_labelled(tmp_path):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "p.md"
    page.write_text(CHECK_PAGE.replace("assert 1 + 1 == 2", "import torch\nassert 1 + 1 == 2"))
    data = _verified(page, tmp_path)
    out = render.render(page.read_text(), page, data)
    assert f'??? success hb-check "Checked on torch {TORCH} (CPU) · show how"' in out
    assert '  ??? note hb-check hb-notrun "Not run: needs CUDA (no GPU run is recorded) · show the check"' in out
    assert "```check" not in out
    # the CUDA-only example: its title and a visible note say it did not run
    assert '```python title="not run: needs CUDA; CUDA only"' in out
    assert "Not run: needs CUDA. No GPU run of this page is recorded" in out
    # the page's main example needs CUDA: the CPU badge is not a green "Verified"
    assert "hb-partial" in out and "the main examples need CUDA and did not run" in out
    assert "Not run: 2 needs CUDA" in out


def test_the_banner_counts_what_ran_and_what_did_not(tmp_path):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "p.md"
    page.write_text(CHECK_PAGE.replace("assert 1 + 1 == 2", "import torch\nassert 1 + 1 == 2"))
    data = _verified(page, tmp_path)
    totals = coverage.totals([parse_page(page)], data)
    assert totals.run["cpu"] == {"example": 1, "check": 1} and totals.run["cuda"] == {"example": 0, "check": 0}
    assert totals.cuda_only_not_run == 2
    text = coverage.banner(totals)
    assert text == "1 examples and 1 claim checks run on CPU; 2 CUDA-only blocks not yet run (no GPU run is recorded)"
    assert "every" not in text.lower()


def test_a_check_that_holds_only_from_some_release_says_since_when(tmp_path):
    from handbook.site import history

    page_path = tmp_path / "p.md"
    page_path.write_text("---\nkind: guide\n---\n\n# p\n\nA claim.\n\n```check\nassert True\n```\n")
    page = parse_page(page_path)
    releases = ["2.5.1", "2.6.0", "2.7.1"]
    results = {"2.5.1": "error", "2.6.0": "same", "2.7.1": "same"}
    data = {
        "releases": [{"release": r} for r in releases],
        "pages": {page.rel: {"examples": [{"code": page.examples[0].code_hash, "results": results}]}},
    }
    assert history.holds_since(page, 0, data) == "2.6"
    assert history.holds_since(page, 0, {**data, "pages": {}}) is None  # no data: nothing said
    results["2.5.1"] = "same"  # holds everywhere: nothing to say
    assert history.holds_since(page, 0, data) is None
    states = {"cpu": ("verified", {"torch": "2.15.0+cpu"}), "cuda": ("unverified", None)}
    lines = render._check_lines(page.examples[0], states, "2.6")
    assert lines[0] == '??? success hb-check "Checked on torch 2.15.0 (CPU) · holds since torch 2.6 · show how"'


def test_the_tldr_says_which_release_added_the_api(tmp_path):
    from handbook.site import history

    page_path = tmp_path / "sdpa.md"
    page_path.write_text("---\nkind: api\napi: torch.nn.functional.scaled_dot_product_attention\n---\n\n# x\n")
    page = parse_page(page_path)
    assert history.added_label(page) == "Added in torch 2.0"  # from the committed version data
    assert history.added_label(page, {"apis": {}}) is None
    assert '<span class="hb-added">Added in torch 2.0</span></p>' in render.tldr("s", "Added in torch 2.0")
