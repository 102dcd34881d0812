"""Run pages in fresh children forked from this warm process, a few at a time.

Why fork: `import torch` costs about 2 s per fresh process; a fork of a parent that already imported it costs
milliseconds, and each page still gets a clean process. CUDA must never be initialised here, in the parent:
a forked child cannot use a CUDA context it inherited.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field

from .execute import child_main

_fork = multiprocessing.get_context("fork")


def warm_up() -> None:
    """Import what every page needs, once, before forking."""
    import numpy  # noqa: F401
    import torch  # noqa: F401

    try:
        import torchvision  # noqa: F401
    except ImportError:  # an old torch release probed without a torchvision built for this Python
        pass
    # Not torch.utils.benchmark: importing it here queries CUDA, and every forked child then fails to use CUDA
    # ("Cannot re-initialize CUDA in forked subprocess") instead of reporting why it has none.


@dataclass
class Job:
    page: object
    device: str
    results: dict[int, dict] = field(default_factory=dict)
    aborted: str | None = None  # why the child died before finishing
    aborted_at: int | None = None  # index of the example running when it died
    exec_seconds: float = 0.0  # time spent inside examples
    wall_seconds: float = 0.0  # fork to exit, as the parent saw it


@dataclass
class _Running:
    job: Job
    process: object
    conn: object
    workdir: str
    started: float
    deadline: float | None = None
    current: int | None = None
    ended: bool = False


def run_jobs(jobs: list[Job], workers: int, memory_limit: int | None = None, on_done=None) -> list[Job]:
    """Run every job; call on_done(job) as each finishes. Faults fail that job only."""
    pending = list(jobs)
    running: list[_Running] = []
    exiting: list = []  # children that sent their results and are still tearing down their memory
    threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():  # a thread count asked for (the portability pass does)
        threads = max(1, int(os.environ["OMP_NUM_THREADS"]))

    def finish(r: _Running) -> None:
        _finish(r)
        running.remove(r)
        if on_done:
            on_done(r.job)

    while pending or running:
        while pending and len(running) < workers:
            running.append(_start(pending.pop(0), threads, memory_limit))
        now = time.monotonic()
        deadlines = [r.deadline for r in running if r.deadline is not None]
        timeout = max(0.0, min(deadlines) - now) if deadlines else None
        ready = multiprocessing.connection.wait(
            [r.conn for r in running] + [r.process.sentinel for r in running], timeout
        )
        for r in list(running):
            if r.conn in ready or r.process.sentinel in ready:
                _drain(r)
            if r.ended:
                # The page is done once its results are in; the exit of a large process is reaped later.
                exiting.append(r.process)
                finish(r)
            elif not r.process.is_alive():
                r.process.join()
                _drain(r)
                finish(r)
            elif r.deadline is not None and time.monotonic() >= r.deadline:
                example = r.job.page.examples[r.current]
                r.process.kill()
                r.process.join()
                r.job.aborted = f"timed out after {example.options.timeout:g} s"
                r.job.aborted_at = r.current
                finish(r)
        exiting = [p for p in exiting if p.is_alive()]
    for process in exiting:
        process.join()
    return jobs


def _start(job: Job, threads: int, memory_limit: int | None) -> _Running:
    workdir = tempfile.mkdtemp(prefix="handbook-page-")  # holds the child's log and, in work/, its cwd
    os.mkdir(os.path.join(workdir, "work"))
    recv, send = _fork.Pipe(duplex=False)
    process = _fork.Process(
        target=child_main,
        args=(job.page, job.device, send, workdir, threads, memory_limit if job.device == "cpu" else None),
    )
    started = time.monotonic()
    process.start()
    send.close()
    return _Running(job, process, recv, workdir, started)


def _drain(r: _Running) -> None:
    try:
        while r.conn.poll():
            message = r.conn.recv()
            if message[0] == "start":
                r.current = message[1]
                r.deadline = time.monotonic() + r.job.page.examples[message[1]].options.timeout
            elif message[0] == "result":
                r.job.results[message[1]] = message[2]
                r.current, r.deadline = None, None
            elif message[0] == "end":
                r.job.exec_seconds = message[1]
                r.ended = True
    except (EOFError, OSError):
        pass


def _finish(r: _Running) -> None:
    job = r.job
    job.wall_seconds = time.monotonic() - r.started
    if job.aborted is None and not r.ended:
        job.aborted_at = r.current
        code = r.process.exitcode
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            hint = " (out of memory?)" if -code == signal.SIGKILL else ""
            job.aborted = f"crashed: killed by {name}{hint}"
        else:
            job.aborted = f"the page's process exited with code {code} before finishing"
        log = _log_tail(r.workdir)
        if log:
            job.aborted += "\n" + log
    r.conn.close()
    shutil.rmtree(r.workdir, ignore_errors=True)


def _log_tail(workdir: str, limit: int = 10) -> str:
    try:
        with open(os.path.join(workdir, ".child.log"), errors="replace") as f:
            lines = [line.rstrip() for line in f if line.strip()]
    except OSError:
        return ""
    return "\n".join(lines[-limit:])
