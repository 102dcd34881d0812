"""The cache, the verification record, staleness, and the badges rendered from the record."""

import json
import shutil
from pathlib import Path

from handbook.site import render
from handbook.verify import machine, record
from handbook.verify.runner import verify

TORCH = record.environment()["torch"].split("+")[0]  # the installed release, whichever it is

OK = Path(__file__).parent / "fixtures" / "verify" / "ok.md"


def _setup(tmp_path):
    page = tmp_path / "ok.md"
    shutil.copy(OK, page)
    return page, tmp_path / "verification.json", tmp_path / "cache.json"


def test_unchanged_page_is_not_run_again(tmp_path):
    page, rec, cache = _setup(tmp_path)
    first = verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    assert (first.pages_run, first.pages_cached) == (1, 0)
    second = verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    assert (second.pages_run, second.pages_cached) == (0, 1)
    assert second.count("passed") == first.count("passed") and all(
        o.cached for o in second.outcomes if o.status == "passed"
    )
    page.write_text(page.read_text().replace("print(x * 2)", "print(x * 2)  # changed"))
    third = verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    assert third.pages_run == 1
    forced = verify([str(page)], devices=("cpu",), use_cache=False, record_path=rec, cache_path=cache)
    assert forced.pages_run == 1


def test_failed_pages_are_never_cached(tmp_path):
    page, rec, cache = _setup(tmp_path)
    page.write_text(page.read_text().replace("6.0 cpu", "7.0 cpu"))
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    again = verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    assert again.pages_run == 1 and again.failed == 1


def test_record_holds_hash_versions_date_outcome(tmp_path):
    page, rec, cache = _setup(tmp_path)
    verify([str(page)], devices=("cpu", "cuda"), record_path=rec, cache_path=cache)
    data = json.loads(rec.read_text())
    (entry,) = data["pages"].values()
    (name,) = entry["cpu"]  # the machine that ran it: CPU model and ATen capability
    assert name == machine.cpu_label() and name.startswith(machine.cpu_model()) and "(" in name
    cpu = entry["cpu"][name]
    assert set(cpu) >= {"hash", "outcome", "torch", "torchvision", "python", "date", "passed", "failed", "skipped"}
    assert cpu["outcome"] == "passed" and cpu["torch"] == record.environment()["torch"]
    assert "cuda" not in entry  # nothing ran on CUDA, so nothing is recorded for it


def test_failed_page_is_recorded_as_failed(tmp_path):
    page, rec, cache = _setup(tmp_path)
    page.write_text(page.read_text().replace("6.0 cpu", "7.0 cpu"))
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    (entry,) = json.loads(rec.read_text())["pages"].values()
    (cpu,) = entry["cpu"].values()
    assert cpu["outcome"] == "failed" and cpu["failed"] == 1


def test_changed_examples_make_the_record_stale_and_the_badge_says_so(tmp_path):
    page, rec, cache = _setup(tmp_path)
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    data = record.load(rec)
    html = render.render(page.read_text(), page, data)
    torch_version = record.environment()["torch"]
    assert f"Verified on CPU · {machine.cpu_label()} · torch {torch_version}" in html
    assert "CUDA: not yet verified" in html
    page.write_text(page.read_text().replace("print(x * 2)", "print(x * 3)"))
    html = render.render(page.read_text(), page, data)
    assert "Verified on CPU" not in html and "CPU: stale" in html


def test_failed_record_never_displays_as_verified(tmp_path):
    page, rec, cache = _setup(tmp_path)
    page.write_text(page.read_text().replace("6.0 cpu", "7.0 cpu"))
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    html = render.render(page.read_text(), page, record.load(rec))
    assert "Verified" not in html and "CPU: verification failed" in html


def test_reverifying_identical_content_keeps_the_date(tmp_path):
    page, rec, cache = _setup(tmp_path)
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    data = json.loads(rec.read_text())
    (name,) = data["pages"]
    (cpu,) = data["pages"][name]["cpu"].values()
    cpu["date"] = "2000-01-01"
    rec.write_text(json.dumps(data))
    verify([str(page)], devices=("cpu",), use_cache=False, record_path=rec, cache_path=cache)
    (cpu,) = json.loads(rec.read_text())["pages"][name]["cpu"].values()
    assert cpu["date"] == "2000-01-01"


def test_pages_outside_the_record_folder_are_not_recorded(tmp_path):
    page, _, cache = _setup(tmp_path)
    rec = tmp_path / "elsewhere" / "verification.json"
    rec.parent.mkdir()
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    assert json.loads(rec.read_text())["pages"] == {}


def _hammer(path, worker):
    for n in range(25):
        record.update(
            path,
            {(f"docs/p{worker}-{n}.md", "cpu"): ("h", {"passed": 1, "failed": 0, "skipped": 0})},
            {"torch": "t", "torchvision": "v", "python": "p"},
            {"cpu": "some CPU (AVX2)"},
            None,
        )


def test_concurrent_verifiers_do_not_lose_each_others_records(tmp_path):
    import multiprocessing

    path = tmp_path / "verification.json"
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_hammer, args=(path, w)) for w in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(json.loads(path.read_text())["pages"]) == 6 * 25


COUNTS = {"passed": 2, "failed": 0, "skipped": 0}
ENV = {"torch": "9.9.9", "torchvision": "0.0.1", "python": "3.11.7"}


def _two_machines(tmp_path):
    """The same page verified on two machines, each writing its own record, then merged."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    record.update(a, {("docs/p.md", "cpu"): ("h1", COUNTS)}, ENV, {"cpu": "AMD EPYC (AVX512)"}, None)
    record.update(b, {("docs/p.md", "cpu"): ("h1", COUNTS)}, ENV, {"cpu": "Intel Xeon (AVX2)"}, None)
    return record.merge(record.load(a), record.load(b))


def test_records_of_two_machines_merge_and_the_badge_names_both(tmp_path):
    merged = _two_machines(tmp_path)
    assert sorted(merged["pages"]["docs/p.md"]["cpu"]) == ["AMD EPYC (AVX512)", "Intel Xeon (AVX2)"]
    state, info = record.status(merged, "docs/p.md", "cpu", "h1")
    assert state == "verified" and info["machines"] == ["AMD EPYC (AVX512)", "Intel Xeon (AVX2)"]
    text = render.badge("cpu", state, info)
    assert "Verified on CPU · AMD EPYC (AVX512), Intel Xeon (AVX2) · torch 9.9.9" in text


def test_a_second_machine_keeps_the_first_machines_entry(tmp_path):
    path = tmp_path / "r.json"
    record.update(path, {("docs/p.md", "cpu"): ("h1", COUNTS)}, ENV, {"cpu": "AMD EPYC (AVX512)"}, None)
    record.update(path, {("docs/p.md", "cpu"): ("h1", COUNTS)}, ENV, {"cpu": "Intel Xeon (AVX2)"}, None)
    assert len(record.load(path)["pages"]["docs/p.md"]["cpu"]) == 2
    # new examples verified on one machine: the other machine's entry, about older examples, goes
    record.update(path, {("docs/p.md", "cpu"): ("h2", COUNTS)}, ENV, {"cpu": "Intel Xeon (AVX2)"}, None)
    assert list(record.load(path)["pages"]["docs/p.md"]["cpu"]) == ["Intel Xeon (AVX2)"]


def test_a_failure_on_any_machine_makes_the_page_failed(tmp_path):
    merged = _two_machines(tmp_path)
    merged["pages"]["docs/p.md"]["cpu"]["Intel Xeon (AVX2)"]["outcome"] = "failed"
    state, info = record.status(merged, "docs/p.md", "cpu", "h1")
    assert state == "failed" and info["failed_on"] == ["Intel Xeon (AVX2)"]
    assert "verification failed on Intel Xeon (AVX2)" in render.badge("cpu", state, info)


def test_older_records_without_machine_names_still_read(tmp_path):
    legacy = {
        "pages": {"docs/p.md": {"cpu": {"hash": "h1", "outcome": "passed", **COUNTS, **ENV, "date": "2026-11-30"}}}
    }
    state, info = record.status(legacy, "docs/p.md", "cpu", "h1")
    assert state == "verified" and info["machines"] == [record.UNNAMED]
    assert "Verified on CPU · torch 9.9.9" in render.badge("cpu", state, info)  # no invented machine name


MACHINE_PAGE = """---
kind: guide
summary: x
---

# A page

```python
import torch
```

```python machine="the capability depends on the CPU"
print(torch.backends.cpu.get_cpu_capability())
```
"""


def test_machine_dependent_output_is_recorded_per_machine_and_rendered_as_tabs(tmp_path):
    import torch

    page = tmp_path / "m.md"
    page.write_text(MACHINE_PAGE)
    rec = tmp_path / "verification.json"
    report = verify([str(page)], devices=("cpu",), record_path=rec, cache_path=tmp_path / "c.json")
    assert report.failed == 0 and report.count("passed") == 2
    data = record.load(rec)
    (outputs,) = data["pages"][next(iter(data["pages"]))]["machine_outputs"].values()
    assert outputs["cpu"][machine.cpu_label()]["output"] == torch.backends.cpu.get_cpu_capability() + "\n"
    html = render.render(page.read_text(), page, data)
    assert f'=== "On {machine.cpu_label()}"' in html and torch.backends.cpu.get_cpu_capability() in html
    assert "No run of this code is recorded yet" in render.render(page.read_text(), page, {"pages": {}})


def test_a_machine_dependent_example_that_raises_fails(tmp_path):
    page = tmp_path / "m.md"
    page.write_text(MACHINE_PAGE.replace("print(torch.backends.cpu.get_cpu_capability())", "1 / 0"))
    report = verify([str(page)], devices=("cpu",), record_path=None, cache_path=tmp_path / "c.json")
    assert report.failed == 1 and "ZeroDivisionError" in next(o.detail for o in report.outcomes if o.status == "failed")


def test_a_cached_verify_does_not_import_torch(tmp_path):
    """The machine's CPU capability is kept per CPU, flags, limit and torch build: a verify whose pages are all in
    its cache never pays torch's import (issue: a cached verify of an unchanged page took 5-6 s)."""
    import subprocess
    import sys

    from handbook import ROOT

    page = tmp_path / "p.md"
    page.write_text("---\nkind: guide\n---\n\n# p\n\n```python\nprint(1)\n```\n\n```output\n1\n```\n")
    cache = tmp_path / "cache.json"
    code = (
        "import sys; from handbook.verify.runner import verify; "
        f"r = verify([{str(page)!r}], devices=('cpu',), record_path=None, cache_path=__import__('pathlib').Path({str(cache)!r})); "
        "print(r.pages_cached, 'torch' in sys.modules)"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "scripts"), "HANDBOOK_NO_REEXEC": "1"}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    # The verifier itself never imports torch: its warm process runs the pages (and ATen's capability is asked there)
    assert first.stdout.split() == ["0", "False"], first.stderr[-2000:]
    assert second.stdout.split() == ["1", "False"], second.stderr[-2000:]
