"""The cache, the verification record, staleness, and the badges rendered from the record."""

import json
import shutil
from pathlib import Path

from handbook import record, render
from handbook.verify import verify

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
    cpu = entry["cpu"]
    assert set(cpu) >= {"hash", "outcome", "torch", "torchvision", "python", "date", "passed", "failed", "skipped"}
    assert cpu["outcome"] == "passed" and cpu["torch"] == record.environment()["torch"]
    assert "cuda" not in entry  # nothing ran on CUDA, so nothing is recorded for it


def test_failed_page_is_recorded_as_failed(tmp_path):
    page, rec, cache = _setup(tmp_path)
    page.write_text(page.read_text().replace("6.0 cpu", "7.0 cpu"))
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    (entry,) = json.loads(rec.read_text())["pages"].values()
    assert entry["cpu"]["outcome"] == "failed" and entry["cpu"]["failed"] == 1


def test_changed_examples_make_the_record_stale_and_the_badge_says_so(tmp_path):
    page, rec, cache = _setup(tmp_path)
    verify([str(page)], devices=("cpu",), record_path=rec, cache_path=cache)
    data = record.load(rec)
    html = render.render(page.read_text(), page, data)
    assert f"Verified on CPU · torch {TORCH}" in html and "CUDA: not yet verified" in html
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
    data["pages"][name]["cpu"]["date"] = "2000-01-01"
    rec.write_text(json.dumps(data))
    verify([str(page)], devices=("cpu",), use_cache=False, record_path=rec, cache_path=cache)
    assert json.loads(rec.read_text())["pages"][name]["cpu"]["date"] == "2000-01-01"


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
            None,
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
