"""`verify --shard I/N`: every page in exactly one shard, and the shards' runs together equal one full run."""

import subprocess
import sys
from pathlib import Path

import pytest

from handbook import ROOT
from handbook.verify import record
from handbook.verify.document import collect, parse_page
from handbook.verify.runner import shard_of, verify

PAGES = Path(__file__).parent / "fixtures" / "verify"
SAMPLE = ["ok.md", "raises.md", "warnings.md", "lines.md", "crash_exit.md"]


def test_every_real_page_is_in_exactly_one_shard_and_shards_are_balanced():
    pages = [parse_page(p) for p in collect(None)]
    for count in (1, 2, 4, 7):
        shards = [shard_of(pages, i, count) for i in range(1, count + 1)]
        names = [p.rel for shard in shards for p in shard]
        assert sorted(names) == sorted(p.rel for p in pages) and len(names) == len(set(names))
        examples = [sum(len(p.examples) for p in shard) for shard in shards]
        assert max(examples) - min(examples) <= max(len(p.examples) for p in pages)


def test_a_shard_is_the_same_whatever_order_the_pages_come_in():
    pages = [parse_page(PAGES / n) for n in SAMPLE]
    assert [p.rel for p in shard_of(pages, 2, 3)] == [p.rel for p in shard_of(pages[::-1], 2, 3)][::-1]


def test_a_shard_index_outside_its_count_is_refused():
    with pytest.raises(ValueError, match="between 1 and 3"):
        shard_of([], 4, 3)
    cli = subprocess.run(
        [sys.executable, "-m", "handbook", "verify", "--shard", "0/3", "--no-record"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin"},
    )
    assert cli.returncode == 2 and "'0/3': expected I/N with 1 <= I <= N" in cli.stderr


def _outcomes(report):
    return sorted((o.example.path, o.example.line, o.device, o.status, o.reason or "") for o in report.outcomes)


def test_shards_together_equal_one_full_run():
    paths = [str(PAGES / n) for n in SAMPLE]
    options = {"devices": ("cpu",), "use_cache": False, "record_path": None}
    full = verify(paths, **options)
    parts = [verify(paths, shard=(i, 3), **options) for i in (1, 2, 3)]
    assert all(part.outcomes for part in parts)  # three non-empty shards of five pages
    assert sorted(o for part in parts for o in _outcomes(part)) == _outcomes(full)
    assert sum(part.failed for part in parts) == full.failed > 0  # crash_exit.md fails in whichever shard has it


def test_the_shards_records_merged_equal_the_record_of_one_full_run(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("ok.md", "raises.md", "warnings.md", "lines.md"):
        (docs / name).write_text((PAGES / name).read_text())
    options = {"devices": ("cpu",), "use_cache": False}
    verify([str(docs)], record_path=docs / "full.json", **options)
    for i in (1, 2):
        verify([str(docs)], shard=(i, 2), record_path=docs / f"shard-{i}.json", **options)
    shards = [record.load(docs / f"shard-{i}.json")["pages"] for i in (1, 2)]
    assert shards[0] and shards[1] and not set(shards[0]) & set(shards[1])
    merged = record.merge_files([docs / "shard-1.json", docs / "shard-2.json"], path=docs / "merged.json")
    assert merged["pages"] == record.load(docs / "full.json")["pages"] and len(merged["pages"]) == 4
    (docs / "broken.json").write_text("[]")
    with pytest.raises(record.NotARecord, match="broken.json: not a verification record"):
        record.merge_files([docs / "broken.json"], path=docs / "merged.json")
