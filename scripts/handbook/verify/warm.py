"""The warm process: the one process pages are forked from, and the verifier's handle on it.

The verifier holds the caller's environment (tokens, credentials) and the secret guard built from it; it never
forks a page. It starts this process (`python -m handbook.verify.warm`) with the cleaned environment
(sandbox.ALLOWED_ENV, plus the tool's own folder on PYTHONPATH and glibc's huge-page setting), in a session of
its own, before torch is imported anywhere. So nothing of the caller's environment is in a page's memory, in its
/proc/self/environ, or reachable through its process group.

Here, once: import torch (and back its memory by huge pages, which makes each fork cheaper), name the machine,
open the cgroup folders, then move into the root built for pages (rootfs.py). Then, for each batch the verifier
sends: run its pages (pool.schedule) and send back each page's results as it finishes. A failure to build the root
is reported to the verifier, which fails every page with it: pages never run with less isolation than promised.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

from handbook.verify import channel, kernel, pool, sandbox, terminal

HUGE_PAGES = "glibc.malloc.hugetlb=1"  # malloc'd memory on transparent huge pages (glibc >= 2.35)
REPLY_LIMIT = 1 << 30  # bytes of one message from the warm process (a page's results; outputs are capped)
REQUEST_LIMIT = 1 << 30  # bytes of one batch from the verifier (pages, pickled)
STOP_SECONDS = 10.0  # how long the warm process gets to end its pages when the verifier stops it


def environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The warm process's whole environment: the variables a page may see, and what starts the tool."""
    environ = os.environ if environ is None else environ
    env = sandbox.clean_environment(environ)
    tunables = env.get("GLIBC_TUNABLES", "")
    if HUGE_PAGES not in tunables:
        env["GLIBC_TUNABLES"] = f"{tunables}:{HUGE_PAGES}" if tunables else HUGE_PAGES
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])  # this checkout's tool, whatever the caller's path
    if environ.get("PYTHONDONTWRITEBYTECODE"):
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


# ---------------------------------------------------------------------------------------------------------------
# The verifier's side


class WarmProcess:
    def __init__(self, found: sandbox.Support, env: dict[str, str], key):
        self.key = key
        requests, self.requests = os.pipe()
        self.replies, replies = os.pipe()
        config = {"requests": requests, "replies": replies, "parent": os.getpid()}
        config.update(namespaces=found.namespaces, cgroups=found.cgroups, fair=found.fair)
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "handbook.verify.warm", json.dumps(config)],
            env=env,
            pass_fds=(requests, replies),
            stdin=subprocess.DEVNULL,
            stdout=2,  # a stray print of the warm process must not mix into the verifier's report
            start_new_session=True,  # no signal to the verifier's process group reaches it, nor the reverse
            cwd="/",
        )
        os.close(requests)
        os.close(replies)
        self.info: dict | None = None

    def ready(self) -> dict:
        """What the warm process said once started: {"label": CPU label} or {"error": why no page can run}."""
        if self.info is None:
            try:
                self.info = channel.receive(self.replies, REPLY_LIMIT)
            except (EOFError, OSError, channel.ChannelError) as exc:
                self.info = {"error": f"the warm process failed to start ({self._exit()}): {exc or 'no reply'}"}
        return self.info

    def run(self, jobs: list, workers: int, memory_limit: int | None, on_done) -> list:
        from handbook.verify import execute

        error = self.ready().get("error")
        left = dict(enumerate(jobs))
        try:
            if error is None:
                batch = {
                    "jobs": [(job.page, job.device) for job in jobs],
                    "workers": workers,
                    "memory_limit": memory_limit,
                    "full_timing": execute.FULL_TIMING,
                }
                data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
                channel.write(self.requests, channel.HEADER.pack(len(data)) + data)
                error = self._collect(left, on_done)
        except BaseException:
            self.close()
            raise
        for job in left.values():  # fail closed: whatever did not run is a failure, with the reason
            job.aborted, job.aborted_at = error, (_first(job) if job.aborted_at is None else job.aborted_at)
            if on_done:
                on_done(job)
        return jobs

    def _collect(self, left: dict, on_done) -> str | None:
        while True:
            try:
                reply = channel.receive(self.replies, REPLY_LIMIT)
            except (EOFError, OSError, channel.ChannelError) as exc:
                return f"the warm process that runs pages died ({self._exit()}; {exc or 'no reply'})"
            if reply.get("done"):
                return None
            job = left.pop(reply["job"])
            job.results = {int(i): _shown(result) for i, result in reply["results"].items()}
            job.aborted = terminal.shown(reply["aborted"]) if reply["aborted"] else None
            job.aborted_at, job.exec_seconds, job.wall_seconds = (
                reply["aborted_at"],
                reply["exec_seconds"],
                reply["wall_seconds"],
            )
            if on_done:
                on_done(job)

    def _exit(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"exit status {code}"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Stop it; it ends every page it runs, and removes their cgroups, before it exits."""
        for fd in (self.requests, self.replies):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _shown(result: dict) -> dict:
    """A page's result as the verifier uses it: its text in the visible form of terminal.py."""
    return {k: terminal.shown(v) if isinstance(v, str) else v for k, v in result.items()}


def _first(job) -> int | None:
    from handbook.verify.execute import runnable

    found = runnable(job.page, job.device)
    return found[0] if found else None


_current: WarmProcess | None = None


def process() -> WarmProcess:
    """The warm process for this environment, started if none runs (a test changing a page-visible variable,
    or the sandbox's support, gets a new one)."""
    global _current
    found = sandbox.support()
    env = environment()
    key = (sys.executable, tuple(sorted(env.items())), found)
    if _current is not None and (_current.key != key or not _current.alive):
        _current.close()
        _current = None
    if _current is None:
        _current = WarmProcess(found, env, key)
    return _current


@atexit.register
def stop() -> None:
    """End the warm process and wait for it. `python -m handbook` leaves with os._exit (see __main__.py), which runs
    no atexit hook: a command that started it calls this first, so no warm process outlives it (and writes its
    teardown noise into the caller's output after the command has returned)."""
    if _current is not None:
        _current.close()


def cpu_label() -> str:
    """The machine class of the CPU pass, as the warm process (which runs the pages) sees it."""
    return process().ready().get("label", "unknown CPU")


def run_jobs(jobs: list[pool.Job], workers: int, memory_limit: int | None = None, on_done=None) -> list[pool.Job]:
    """Run every job in the warm process; call on_done(job) as each finishes. Faults fail that job only."""
    return process().run(jobs, workers, memory_limit, on_done)


def start_process() -> None:
    """Start the warm process now (it imports torch while the verifier reads pages)."""
    process()


# ---------------------------------------------------------------------------------------------------------------
# The warm process's side


def warm_up() -> None:
    """Import what every page needs, once, before forking."""
    # Not torch.utils.benchmark: importing it here queries CUDA, and every forked child then fails to use CUDA
    # ("Cannot re-initialize CUDA in forked subprocess") instead of reporting why it has none.
    import numpy  # noqa: F401
    import torch

    try:
        import torchvision  # noqa: F401
    except ImportError:  # an old torch release probed without a torchvision built for this Python
        pass
    # The first call sets up every device's generator (10 ms); each page seeds again, from this state. CUDA stays
    # uninitialised: its seeding is queued until first use.
    torch.manual_seed(0)

    # The garbage collector would otherwise walk torch's millions of objects again and again, in this process and in
    # every child (where walking them also copies their memory pages): a page of 8,000 examples cost 2.7 ms per
    # example instead of 1.2 ms with 2,000. Frozen objects are never collected, and torch's modules live forever.
    gc.freeze()
    kernel.collapse_huge_pages()


def main(config: dict) -> int:
    from handbook.verify import execute, isa, machine
    from handbook.verify.cells import Cgroups

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGTERM)  # a verifier killed with SIGKILL still stops us
    if os.getppid() != config["parent"]:
        return 0
    requests, replies = config["requests"], config["replies"]
    for fd in (requests, replies):
        os.set_inheritable(fd, False)  # no process this one starts (a page's PID 1) holds the verifier's pipes
    found = sandbox.Support(config["namespaces"], config["cgroups"], fair=config["fair"])
    info = {"label": "unknown CPU"}
    try:
        warm_up()
        info["label"] = machine.cpu_label()
        compiler = isa.Check()  # runs in the machine's root, while this process goes on
        cgroups = Cgroups(found)  # opened while the machine's /sys/fs/cgroup is still in view
        if found.namespaces:
            from handbook.verify import rootfs

            rootfs.enter_base_root()
    except (OSError, ImportError) as exc:
        info["error"] = f"the pages' sandbox could not be built, so no page ran: {exc}"
        channel.send(replies, info)
        return 1
    channel.send(replies, info)
    while True:
        try:
            batch = pickle.loads(channel.receive_bytes(requests, REQUEST_LIMIT))
        except EOFError:
            return 0
        execute.FULL_TIMING = batch["full_timing"]
        jobs = [pool.Job(page, device) for page, device in batch["jobs"]]
        if isa.uses_compile(job.page for job in jobs) and compiler.ok():
            os.environ[isa.VARIABLE] = "1"  # pages inherit it (sandbox.ALLOWED_ENV)
        pool.schedule(jobs, batch["workers"], batch["memory_limit"], found, cgroups, _replier(replies, jobs))
        channel.send(replies, {"done": True})


def _replier(replies: int, jobs: list):
    index = {id(job): k for k, job in enumerate(jobs)}

    def done(job) -> None:
        reply = {
            "job": index[id(job)],
            "results": job.results,
            "aborted": job.aborted,
            "aborted_at": job.aborted_at,
            "exec_seconds": job.exec_seconds,
            "wall_seconds": job.wall_seconds,
        }
        channel.send(replies, reply)

    return done


if __name__ == "__main__":
    try:
        code = main(json.loads(sys.argv[1]))
    except SystemExit as stop:  # SIGTERM (the verifier closing it), even in the middle of importing torch
        code = stop.code if isinstance(stop.code, int) else 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # not torch's finalizers: nothing of them matters, and a SIGTERM then would only add noise
