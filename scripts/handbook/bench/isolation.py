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

from handbook import DOCS
from handbook.verify.document import collect, parse_page
from handbook.verify.pool import Job
from handbook.verify.warm import run_jobs, start_process

# The default sample: fixed, so figures compare across runs, and chosen to span the handbook: small and large pages,
# tensor ops, layers, functional, optimizers, data loading with workers, autograd, a comparison and a guide.
SAMPLE = [
    "torch/zeros.md",
    "torch/cat.md",
    "torch/gather.md",
    "torch/tensor/view.md",
    "torch/nn/linear.md",
    "torch/nn/conv2d.md",
    "torch/nn/functional/relu.md",
    "torch/nn/functional/cross_entropy.md",
    "torch/optim/sgd.md",
    "torch/utils/data/dataloader.md",
    "torch/autograd/grad.md",
    "comparisons/cat-vs-stack.md",
    "guides/broadcasting.md",
]


def _fresh(page_path: str) -> tuple[float, float]:
    """Wall and in-example seconds of one page run in a brand-new python process."""
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "result.json")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "handbook.bench.isolation", page_path, result, tmp], check=True)
        wall = time.perf_counter() - started
        with open(result) as f:
            return wall, json.load(f)["exec_seconds"]


def _fresh_main(page_path: str, result_path: str, tmp: str) -> None:
    # Everything a forked child gets for free, paid here: interpreter start, imports, then the same page code,
    # asked for one example at a time as the warm process does (a thread plays its part), timed the same way.
    import threading

    from handbook.verify import channel, warm
    from handbook.verify.execute import runnable, serve

    warm.warm_up()
    page = parse_page(page_path)
    ctl_read, ctl = os.pipe()
    out, out_write = os.pipe()
    timed = {"exec_seconds": 0.0}

    def drive() -> None:
        channel.receive(out, 1 << 30)  # ready
        for i in runnable(page, "cpu"):
            channel.send(ctl, ["run", i, "fresh"])
            timed["exec_seconds"] += channel.receive(out, 1 << 30)[3]["seconds"]
        # Said, not signalled by closing the pipe: a page's forked processes (DataLoader workers still referenced
        # from its namespace) hold the pipe's write end too, so serve() would wait for an end of file forever.
        channel.send(ctl, ["stop", None, None])
        os.close(ctl)

    driver = threading.Thread(target=drive)
    driver.start()
    os.chdir(tmp)  # removed with the caller's temporary folder
    serve(page, "cpu", os.cpu_count() or 1, ctl_read, out_write)
    driver.join()
    with open(result_path, "w") as f:
        json.dump(timed, f)


def main(paths: list[str] | None, repeat: int = 3) -> int:
    chosen = paths or [str(DOCS / rel) for rel in SAMPLE if (DOCS / rel).exists()]
    pages = [p for p in (parse_page(path) for path in collect(chosen)) if p.examples]
    if not pages:
        print("error: no page with examples to measure", file=sys.stderr)
        return 2
    which = "the pages given" if paths else "the fixed sample (bench.SAMPLE; pass paths to measure others)"
    print(f"pages: {len(pages)} with examples, {which}: {', '.join(p.rel for p in pages)}")
    print(f"CPU pass; warm runs repeated {repeat}x, fresh runs once", flush=True)
    start_process()
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


def scaling(sizes: tuple[int, ...] = (1000, 2000, 4000, 8000)) -> int:
    """Verify time of pages of N tiny examples: cost per example must not grow with N (linear, not quadratic)."""
    from handbook.verify.runner import verify

    start_process()
    per_example = []
    with tempfile.TemporaryDirectory(prefix="handbook-scaling-") as tmp:
        for n in sizes:
            page = os.path.join(tmp, f"tiny-{n}.md")
            blocks = [f"```python\nx = {i}\nprint(x + 1)\n```\n\n```output\n{i + 1}\n```\n" for i in range(n)]
            with open(page, "w", encoding="utf-8") as f:
                f.write("---\nkind: guide\nsummary: scaling\n---\n\n# Scaling\n\n" + "\n".join(blocks))
            started = time.perf_counter()
            report = verify([page], devices=("cpu",), use_cache=False, record_path=None, stream=open(os.devnull, "w"))
            seconds = time.perf_counter() - started
            assert report.failed == 0, f"{page}: {report.failed} failed"
            per_example.append(seconds / n)
            print(f"{n:6d} examples: {seconds:6.2f} s, {seconds / n * 1e6:7.1f} us/example", flush=True)
    print(f"growth: {per_example[-1] / per_example[0]:.2f}x per example from {sizes[0]} to {sizes[-1]} (1.0 = linear)")
    return 0


if __name__ == "__main__":
    _fresh_main(*sys.argv[1:4])
