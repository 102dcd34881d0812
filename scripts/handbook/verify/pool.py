"""Run pages in fresh children forked from this warm process, a few at a time.

Why fork: `import torch` costs about 2 s per fresh process; a fork of a parent that already imported it costs
milliseconds, and each page still gets a clean process. CUDA must never be initialised here, in the parent:
a forked child cannot use a CUDA context it inherited.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.connection
import os
import secrets
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field

from handbook.verify import sandbox
from handbook.verify.execute import child_main, runnable

MESSAGE_LIMIT = 16 << 20  # bytes of one message from a page; more is tampering (outputs are cut at 1 MiB)

_fork = multiprocessing.get_context("fork")


def warm_up() -> None:
    """Import what every page needs, once, before forking."""
    # Not torch.utils.benchmark: importing it here queries CUDA, and every forked child then fails to use CUDA
    # ("Cannot re-initialize CUDA in forked subprocess") instead of reporting why it has none.
    import gc

    import numpy  # noqa: F401
    import torch  # noqa: F401

    try:
        import torchvision  # noqa: F401
    except ImportError:  # an old torch release probed without a torchvision built for this Python
        pass

    # The garbage collector would otherwise walk torch's millions of objects again and again, in this process and in
    # every child (where walking them also copies their memory pages): a page of 8,000 examples cost 2.7 ms per
    # example instead of 1.2 ms with 2,000. Frozen objects are never collected, and torch's modules live forever.
    gc.freeze()


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
    cell: sandbox.Cell
    expected: list[int]  # the examples the child must report on, in this order
    deadline: float | None = None
    current: int | None = None
    ended: bool = False


def run_jobs(jobs: list[Job], workers: int, memory_limit: int | None = None, on_done=None) -> list[Job]:
    """Run every job; call on_done(job) as each finishes. Faults fail that job only."""
    pending = list(jobs)
    running: list[_Running] = []
    exiting: list[_Running] = []  # children that sent their results and are still tearing down their memory
    threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():  # a thread count asked for (the portability pass does)
        threads = max(1, int(os.environ["OMP_NUM_THREADS"]))

    def finish(r: _Running) -> None:
        _finish(r)
        running.remove(r)
        if on_done:
            on_done(r.job)

    try:
        while pending or running:
            while pending and len(running) < workers:
                running.append(_start(pending.pop(0), threads, memory_limit, running))
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
                    r.cell.kill()
                    exiting.append(r)
                    finish(r)
                elif not r.process.is_alive():
                    _end(r)
                    _drain(r)
                    finish(r)
                elif r.deadline is not None and time.monotonic() >= r.deadline:
                    example = r.job.page.examples[r.current]
                    _end(r)
                    r.job.aborted = f"timed out after {example.options.timeout:g} s"
                    r.job.aborted_at = r.current
                    finish(r)
                elif r.job.aborted:  # tampered with its channel
                    _end(r)
                    finish(r)
            for r in [r for r in exiting if not r.process.is_alive()]:
                _end(r)
                exiting.remove(r)
    finally:
        # Also when this process is stopped (SIGTERM, Ctrl-C): no page's processes outlive it.
        for r in running + exiting:
            _end(r)
        for r in running:
            r.conn.close()
            os.close(r.cell.log)
    return jobs


def _end(r: _Running) -> None:
    """Kill every process of the page and wait for them."""
    r.cell.kill()
    r.process.kill()
    r.process.join()
    r.cell.close()


def _start(job: Job, threads: int, memory_limit: int | None, running: list[_Running]) -> _Running:
    if sandbox.support().namespaces:
        # Made inside the page's own /tmp only: nothing of it exists here, so nothing is left behind.
        workdir = f"/tmp/handbook-page-{secrets.token_hex(6)}"
    else:
        workdir = tempfile.mkdtemp(prefix="handbook-page-")
        os.mkdir(os.path.join(workdir, "work"))
    recv, send = _fork.Pipe(duplex=False)
    cell = sandbox.Cell.create(memory_limit)  # the cgroup's cap covers every process of the page, CUDA pass too
    cell.log = os.memfd_create("page-log")  # the child's stdout/stderr outside examples, faulthandler's dumps
    # A forked child inherits every fd of this process: other pages' channels and logs are not its business.
    cell.foreign = [fd for r in running for fd in (r.conn.fileno(), r.cell.log)]
    process = _fork.Process(
        target=child_main,
        args=(job.page, job.device, send, workdir, threads, memory_limit if job.device == "cpu" else None, cell),
    )
    started = time.monotonic()
    cell.start(process)
    send.close()
    return _Running(job, process, recv, workdir, started, cell, runnable(job.page, job.device))


class Tampered(Exception):
    """The page's process sent something its runner never sends: the example wrote to the channel."""


def _drain(r: _Running) -> None:
    try:
        while not r.ended and r.job.aborted is None and r.conn.poll():
            _receive(r, json.loads(r.conn.recv_bytes(MESSAGE_LIMIT)))
    except (EOFError, OSError) as exc:
        if isinstance(exc, OSError) and "too long" in str(exc):
            _tampered(r, "a message larger than any result")
    except (ValueError, TypeError, KeyError, IndexError, Tampered) as exc:
        _tampered(r, str(exc) or type(exc).__name__)


def _tampered(r: _Running, why: str) -> None:
    r.job.aborted = f"tampered: the page wrote to the verifier's channel ({why}); its results are void"
    r.job.aborted_at = r.current if r.current is not None else (r.expected[0] if r.expected else None)
    r.job.results.clear()


def _receive(r: _Running, message) -> None:
    """Accept only the runner's own sequence: start i, result i, ... in order, each once, then end."""
    kind = message[0]
    done = len(r.job.results)
    if kind == "start" and r.current is None and done < len(r.expected) and message[1] == r.expected[done]:
        r.current = message[1]
        r.deadline = time.monotonic() + r.job.page.examples[message[1]].options.timeout
    elif kind == "result" and r.current is not None and message[1] == r.current and _is_result(message[2]):
        r.job.results[message[1]] = message[2]
        r.current, r.deadline = None, None
    elif kind == "end" and r.current is None and done == len(r.expected) and isinstance(message[1], float):
        r.job.exec_seconds = message[1]
        r.ended = True
    else:
        raise Tampered(f"unexpected {str(message)[:80]}")


def _is_result(result) -> bool:
    return (
        isinstance(result, dict)
        and isinstance(result.get("output"), str)
        and isinstance(result.get("error"), (str, type(None)))
        and isinstance(result.get("stderr"), str)
        and isinstance(result.get("seconds"), (int, float))
    )


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
        log = _log_tail(r.cell.log)
        if log:
            job.aborted += "\n" + log
    r.conn.close()
    os.close(r.cell.log)
    shutil.rmtree(r.workdir, ignore_errors=True)


def _log_tail(fd: int, limit: int = 10, size: int = 1 << 16) -> str:
    end = os.fstat(fd).st_size
    text = os.pread(fd, size, max(0, end - size)).decode("utf-8", errors="replace")
    lines = [line.rstrip() for line in text.split("\n") if line.strip()]
    return "\n".join(lines[-limit:])
