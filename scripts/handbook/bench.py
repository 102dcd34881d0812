"""`python -m handbook bench`: what per-page isolation costs, forked from a warm parent vs a fresh process.

Overhead of a page = its wall time minus the time spent inside its examples, so both modes are measured the
same way and the examples' own cost cancels out. Figures are medians; the machines here are noisy.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from .document import parse_page
from .pool import Job, run_jobs, warm_up
from .verify import collect


def _fresh(page_path: str) -> tuple[float, float]:
    """Wall and in-example seconds of one page run in a brand-new python process."""
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "result.json")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "handbook.bench", page_path, result, tmp], check=True)
        wall = time.perf_counter() - started
        with open(result) as f:
            return wall, json.load(f)["exec_seconds"]


class _FileConn:
    """Stands in for the pipe when a page runs in a fresh process: keeps only the end message."""

    def __init__(self, path: str):
        self.file = open(path, "w")  # opened before the sandbox hides the caller's /tmp

    def send_bytes(self, data: bytes) -> None:
        message = json.loads(data)
        if message[0] == "end":
            json.dump({"exec_seconds": message[1]}, self.file)
            self.file.flush()


def _fresh_main(page_path: str, result_path: str, tmp: str) -> None:
    # Everything a forked child gets for free, paid here: interpreter start, imports, then the same page code.
    warm_up()
    from .execute import child_main

    workdir = os.path.join(tmp, "page")  # removed with the caller's temporary folder
    os.mkdir(workdir)
    os.mkdir(os.path.join(workdir, "work"))
    child_main(parse_page(page_path), "cpu", _FileConn(result_path), workdir, os.cpu_count() or 1, None)


def main(paths: list[str] | None, repeat: int = 3) -> int:
    pages = [p for p in (parse_page(path) for path in collect(paths)) if p.examples]
    if not pages:
        print("error: no page with examples to measure", file=sys.stderr)
        return 2
    print(f"pages: {len(pages)} with examples, CPU pass; warm runs repeated {repeat}x, fresh runs once", flush=True)
    warm_up()
    overheads = []
    for _ in range(repeat):
        for job in run_jobs([Job(p, "cpu") for p in pages], workers=1):
            overheads.append(job.wall_seconds - job.exec_seconds)
    started = time.perf_counter()
    run_jobs([Job(p, "cpu") for p in pages], workers=os.cpu_count() or 1)
    total = time.perf_counter() - started
    fresh_overheads, fresh_total = [], 0.0
    for page in pages:
        wall, exec_seconds = _fresh(str(page.path))
        fresh_overheads.append(wall - exec_seconds)
        fresh_total += wall
    warm = statistics.median(overheads)
    fresh = statistics.median(fresh_overheads)
    print(f"overhead: {warm * 1000:.1f} ms/page (median of {len(overheads)}, fork of a warm parent)")
    print(
        f"fresh process overhead: {fresh * 1000:.1f} ms/page (median of {len(fresh_overheads)}: start python, import torch)"
    )
    print(f"total verify time: {total:.2f} s ({len(pages)} pages, {os.cpu_count()} jobs, forked)")
    print(f"total as fresh processes: {fresh_total:.2f} s ({len(pages)} pages, one after another)")
    print(f"ratio: {fresh / warm:.1f}x vs a fresh process per page (isolation overhead, medians)")
    return 0


if __name__ == "__main__":
    _fresh_main(*sys.argv[1:4])
