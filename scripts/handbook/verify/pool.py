"""Run pages in fresh children forked from the warm process, a few at a time.

Why fork: `import torch` costs about 2 s per fresh process; a fork of a process that already imported it costs
milliseconds, and each page still gets a clean process. The warm process (warm.py) is never the verifier itself:
it is started with the cleaned environment and only forks pages, so nothing of the caller's environment is in a
page's memory. CUDA must never be initialised there: a forked child cannot use a CUDA context it inherited.

`schedule` runs inside the warm process. It drives each page: it asks for one example at a time (with a nonce the
page's answer must carry), times it, and accepts exactly one answer per request; anything else the page's process
sends (a forged or repeated result, a frame too large, garbage) voids the page's results as tampered. The verifier
(runner.py) judges the outputs and errors, outside every page's process.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
import sys
import time
from dataclasses import dataclass, field

from handbook.verify import channel, sandbox
from handbook.verify.cells import Cell, Cgroups, init_command
from handbook.verify.execute import child_main, runnable

MESSAGE_LIMIT = 8 << 20  # bytes of one frame from a page; a real result is smaller (its fields are capped)
PAGE_LIMIT = 64 << 20  # characters of output, error and stderr kept for one page, all its examples together
POLL = 0.05  # seconds between checks of a page whose exit the kernel cannot signal (no pidfd)
SETUP_TIMEOUT = 60.0  # seconds a page's process may take to enter its sandbox and say it is ready

fork_context = multiprocessing.get_context("fork")  # runner.probe_gpu forks the verifier for one question, never a page


@dataclass
class Job:
    page: object
    device: str
    results: dict[int, dict] = field(default_factory=dict)
    aborted: str | None = None  # why the page's results are incomplete or void
    aborted_at: int | None = None  # index of the example running when it stopped
    exec_seconds: float = 0.0  # time spent inside examples, as the page's process timed each (for `bench` only)
    wall_seconds: float = 0.0  # from making the page's cell to its last result


class Tampered(Exception):
    """The page's process sent something its runner never sends."""


@dataclass
class _Running:
    job: Job
    cell: Cell
    ctl: int  # requests to the page
    reader: channel.Reader  # its answers
    log: int
    folder: str
    started: float
    expected: list[int]  # the examples the page must run, in this order
    on_machine: bool  # its folder is on the machine's /tmp (no namespaces): removed once the page is gone
    ready: bool = False
    position: int = 0  # index into expected of the example asked for
    nonce: str | None = None
    deadline: float | None = None
    done: bool = False
    finished: float | None = None
    kept: int = 0  # characters of results kept so far

    @property
    def current(self) -> int | None:
        return self.expected[self.position] if self.position < len(self.expected) else None


def schedule(jobs: list[Job], workers: int, memory_limit: int | None, found, cgroups: Cgroups, on_done) -> None:
    """Run every job, `workers` pages at once; call on_done(job) as each finishes."""
    pending = list(jobs)
    running: list[_Running] = []
    exiting: list[_Running] = []  # pages whose results are in, being killed and reaped
    threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():  # a thread count asked for (the portability pass does)
        threads = max(1, int(os.environ["OMP_NUM_THREADS"]))
    command = init_command()
    try:
        while pending or running:
            while pending and len(running) < workers:
                job = pending.pop(0)
                try:
                    running.append(_start(job, threads, memory_limit, found, cgroups, command))
                except OSError as exc:  # no cell for it (out of processes or memory): that page fails, not the run
                    job.aborted = f"the page's sandbox could not be set up, so it did not run: {exc}"
                    job.aborted_at = next(iter(runnable(job.page, job.device)), None)
                    on_done(job)
            _wait(running, exiting)
            for r in list(running):
                _step(r)
                if r.done or r.job.aborted:
                    running.remove(r)
                    _finish(r)
                    exiting.append(r)
                    on_done(r.job)
            _reap(exiting, cgroups, block=False)
    finally:
        # Also when this process is stopped: no page's processes outlive it.
        for r in running:
            r.job.aborted = r.job.aborted or "stopped: the verifier was interrupted"
            _finish(r)
        _reap(running + exiting, cgroups, block=True)


def _start(job: Job, threads: int, memory_limit, found, cgroups: Cgroups, command) -> _Running:
    started = time.monotonic()
    folder = sandbox.page_folder(found)
    name = cgroups.make(memory_limit)  # the cgroup's cap covers every process of the page, CUDA pass too
    log = os.memfd_create("page-log")  # the child's stdout/stderr outside examples, faulthandler's dumps
    ctl_read, ctl = os.pipe()
    out, out_write = os.pipe()
    cell = Cell(cgroup=name)
    keep = (ctl_read, out_write, log)

    def confine() -> str:
        return sandbox.confine(found, folder, keep, lambda: cgroups.join(name), job.device)

    def child() -> None:
        limit = memory_limit if job.device == "cpu" else None
        child_main(job.page, job.device, ctl_read, out_write, log, threads, limit, confine)

    try:
        cell.start(found, command, child)
    except OSError:
        cell.kill()
        cell.reap(block=True)
        for fd in (ctl, out, log):
            os.close(fd)
        cgroups.remove(name)
        if not found.namespaces:
            sandbox.remove_folder(folder)
        raise
    finally:
        os.close(ctl_read)
        os.close(out_write)
    expected = runnable(job.page, job.device)
    reader = channel.Reader(out, MESSAGE_LIMIT)
    running = _Running(job, cell, ctl, reader, log, folder, started, expected, not found.namespaces)
    running.deadline = started + SETUP_TIMEOUT
    return running


def _wait(running: list[_Running], exiting: list[_Running]) -> None:
    poll = select.poll()
    for r in running:
        poll.register(r.reader.fd, select.POLLIN)
    for r in running + exiting:
        if r.cell.pidfd is not None:
            poll.register(r.cell.pidfd, select.POLLIN)
    now = time.monotonic()
    deadlines = [r.deadline - now for r in running if r.deadline is not None]
    if any(r.cell.pidfd is None for r in running) or exiting:  # PID 1 of a page has no pidfd here
        deadlines.append(POLL)
    timeout = max(0.0, min(deadlines)) if deadlines else None
    poll.poll(None if timeout is None else timeout * 1000)


def _step(r: _Running) -> None:
    """Take what the page sent; notice its exit or its timeout."""
    try:
        for message in r.reader.feed():
            _receive(r, message)
    except (channel.ChannelError, Tampered) as exc:
        _tampered(r, str(exc))
        return
    if r.done or r.job.aborted:
        return
    if r.cell.reap():
        try:
            for message in r.reader.feed():  # what it sent before it exited
                _receive(r, message)
        except (channel.ChannelError, Tampered, OSError) as exc:
            _tampered(r, str(exc))
            return
        if not r.done:
            _crashed(r)
    elif r.deadline is not None and time.monotonic() >= r.deadline:
        if not r.ready:
            r.job.aborted = f"the page's sandbox was not set up within {SETUP_TIMEOUT:g} s, so it did not run"
        else:
            r.job.aborted = f"timed out after {r.job.page.examples[r.current].options.timeout:g} s"
        r.job.aborted_at = r.current


def _receive(r: _Running, message) -> None:
    """Accept only the runner's own answers: ready once, then one result per request, carrying its nonce."""
    if r.done:
        raise Tampered(f"a message after the last result: {_quoted(message)}")
    if not isinstance(message, list) or not message:
        raise Tampered(f"unexpected {_quoted(message)}")
    if message == ["ready"] and not r.ready:
        r.ready = True
        _ask(r)
        return
    if (
        r.ready
        and len(message) == 4
        and message[0] == "result"
        and message[1] == r.current
        and message[2] == r.nonce
        and _is_result(message[3])
    ):
        r.kept += sum(len(message[3][k] or "") for k in ("output", "error", "stderr"))
        if r.kept > PAGE_LIMIT:  # thousands of examples printing a MiB each: kept, they would fill this machine
            r.job.aborted = f"the page printed more than {PAGE_LIMIT >> 20} MiB in all; its later results were not kept"
            r.job.aborted_at = r.current
            return
        r.job.exec_seconds += message[3]["seconds"]  # all else (fork, sandbox, pipes) counts as overhead
        r.job.results[r.current] = message[3]
        r.position += 1
        _ask(r)
        return
    raise Tampered(f"unexpected {_quoted(message)}")


def _ask(r: _Running) -> None:
    if r.current is None:
        r.done, r.deadline, r.nonce = True, None, None
        r.finished = time.monotonic()
        return
    r.nonce = os.urandom(8).hex()
    r.deadline = time.monotonic() + r.job.page.examples[r.current].options.timeout
    try:
        channel.send(r.ctl, ["run", r.current, r.nonce])
    except OSError:  # the page's process closed its end or is gone: its exit is reported when it is reaped
        pass


def _quoted(message) -> str:
    return str(message)[:80]


def _is_result(result) -> bool:
    return (
        isinstance(result, dict)
        and isinstance(result.get("output"), str)
        and isinstance(result.get("error"), (str, type(None)))
        and isinstance(result.get("stderr"), str)
        and isinstance(result.get("seconds"), (int, float))
    )


def _tampered(r: _Running, why: str) -> None:
    r.job.aborted = f"tampered: the page wrote to the verifier's channel ({why}); its results are void"
    r.job.aborted_at = r.current if r.current is not None else (r.expected[0] if r.expected else None)
    r.job.results.clear()


def _crashed(r: _Running) -> None:
    job = r.job
    job.aborted_at = r.current
    status = r.cell.status
    if not r.ready:
        job.aborted = "the page's sandbox could not be set up, so it did not run"
    elif os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        hint = " (out of memory?)" if os.WTERMSIG(status) == signal.SIGKILL else ""
        job.aborted = f"crashed: killed by {name}{hint}"
    else:
        job.aborted = f"the page's process exited with code {r.cell.exit_code} before finishing"
    log = _log_tail(r.log)
    if log:
        job.aborted += "\n" + log


def _finish(r: _Running) -> None:
    r.cell.kill()
    r.job.wall_seconds = (r.finished or time.monotonic()) - r.started
    os.close(r.ctl)
    if r.done and not r.job.aborted:
        try:  # whatever it wrote after its last result, before it was killed
            extra = r.reader.feed() or r.reader.partial
        except channel.ChannelError:
            extra = True
        if extra:
            _tampered(r, "a message after the last result")


def _reap(pages: list[_Running], cgroups: Cgroups, block: bool) -> None:
    for r in list(pages):
        if block:
            r.cell.kill()
        if not r.cell.reap(block=block):
            continue
        problems = cgroups.remove(r.cell.cgroup)
        for problem in problems:
            print(f"WARNING: a page's cgroup could not be removed: {problem}", file=sys.stderr, flush=True)
        os.close(r.reader.fd)
        os.close(r.log)
        if r.on_machine:
            sandbox.remove_folder(r.folder)
        pages.remove(r)


def _log_tail(fd: int, limit: int = 10, size: int = 1 << 16) -> str:
    end = os.fstat(fd).st_size
    text = os.pread(fd, size, max(0, end - size)).decode("utf-8", errors="replace")
    lines = [line.rstrip() for line in text.split("\n") if line.strip()]
    return "\n".join(lines[-limit:])
