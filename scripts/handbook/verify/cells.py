"""A page's cell, made by the warm process: what holds all of a page's processes, and ends them at once.

- A PID namespace whose PID 1 is a `sleep` that dies with the warm process (parent-death signal). The page's
  process is PID 2; whatever it starts, however detached (setsid, double fork), stays in the namespace, and when
  PID 1 dies the kernel kills all of it. PID 1 keeps its capabilities, so the page (which has none) can neither
  signal nor trace it.
- Per-page v1 cgroups: memory (the cap covers the page and all its children, on the CPU and the CUDA pass), pids
  (at most PIDS_MAX processes and threads) and, where present, cpu (equal shares between pages running at once).

The cgroup folders are reached through descriptors opened before the warm process left the machine's root; the
page's process uses them once, to move itself in, and closes them before any example runs.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from handbook.verify import kernel
from handbook.verify.sandbox import CGROUP_V1, CONTROLLERS, FAIRNESS, Support

PIDS_MAX = 1024  # processes and threads of one page (DataLoader workers, torch's thread pools)


def init_command() -> tuple[str, ...]:
    setpriv, sleep = shutil.which("setpriv"), shutil.which("sleep")
    if setpriv and sleep:
        return (setpriv, "--pdeathsig", "KILL", "--", sleep, "infinity")
    code = "import ctypes,signal;ctypes.CDLL(None).prctl(1,9);signal.pause()"
    return (sys.executable, "-S", "-I", "-c", code)


class Cgroups:
    """The `handbook` folder of each controller, held open: cells are made and removed through it."""

    def __init__(self, found: Support):
        names = [*CONTROLLERS, *([FAIRNESS] if found.fair else [])] if found.cgroups else []
        self.fds = {name: os.open(CGROUP_V1 / name / "handbook", os.O_RDONLY | os.O_DIRECTORY) for name in names}
        self.count = 0

    def make(self, memory_limit: int | None) -> str | None:
        if not self.fds:
            return None
        self.count += 1
        name = f"{os.getpid()}-{self.count}"
        for fd in self.fds.values():
            os.mkdir(name, dir_fd=fd)
        if memory_limit:
            _write(self.fds["memory"], f"{name}/memory.limit_in_bytes", str(memory_limit))
        _write(self.fds["pids"], f"{name}/pids.max", str(PIDS_MAX))
        return name

    def join(self, name: str | None, pid: int = 0) -> None:
        """Move a process into the cell's cgroups: by default the calling one, which must have one thread (the
        page's process right after the fork). Moving the calling thread through `tasks` is the one move the
        kernel makes without the global lock behind `cgroup.procs`, whose first use after a quiet spell waits
        for an RCU grace period (13 ms median here, against 0.5 ms)."""
        for fd in self.fds.values() if name else ():
            _write(fd, f"{name}/tasks" if pid == 0 else f"{name}/cgroup.procs", str(pid))

    def remove(self, name: str | None, wait: float = 2.0) -> list[str]:
        """Remove the cell's cgroups once its processes are gone; what could not be removed, and why."""
        problems = []
        for controller, fd in self.fds.items() if name else ():
            deadline = time.monotonic() + wait
            while True:
                try:
                    os.rmdir(name, dir_fd=fd)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if time.monotonic() > deadline:
                        problems.append(f"{CGROUP_V1 / controller / 'handbook' / name}: {exc.strerror}")
                        break
                    time.sleep(0.005)
        return problems


_DEVNULL = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]


def _spawn(command: tuple[str, ...]) -> int:
    """Start PID 1 of a page's namespace in a session of its own. posix_spawn (a vfork) costs a fraction of
    subprocess.Popen; it inherits no descriptor, since every one of the warm process is close-on-exec."""
    return os.posix_spawn(command[0], list(command), {}, file_actions=_DEVNULL, setsid=True)


def _write(dir_fd: int, path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY, dir_fd=dir_fd)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


@dataclass
class Cell:
    """One page's processes: `start` forks the page inside it; `kill` ends all of it."""

    cgroup: str | None = None
    init: int | None = None  # PID 1 of the page's namespace, as the warm process numbers it
    pid: int | None = None  # the page's process, as the warm process numbers it
    pidfd: int | None = None  # readable once the page's process has exited
    status: int | None = None  # its wait status, once reaped
    problems: list[str] = field(default_factory=list)

    def start(self, found: Support, command: tuple[str, ...], child: Callable[[], None]) -> None:
        """Fork the page's process; in it, run `child` (which never returns)."""
        if not found.namespaces:
            self._fork(child)
            return
        own = os.open("/proc/self/ns/pid", os.O_RDONLY)
        try:
            kernel.unshare(kernel.CLONE_NEWPID)  # the next processes this one starts land in a new PID namespace
            try:
                self.init = _spawn(command)  # PID 1 there
                self._fork(child)  # PID 2
            finally:
                kernel.setns(own, kernel.CLONE_NEWPID)  # back to ours, for the next page's namespace
        finally:
            os.close(own)

    def _fork(self, child: Callable[[], None]) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                child()
            finally:
                os._exit(70)
        self.pid = pid
        try:
            self.pidfd = os.pidfd_open(pid)
        except OSError:  # before Linux 5.3: the scheduler polls instead
            self.pidfd = None

    def kill(self) -> None:
        """Kill every process of the page: PID 1 of its namespace takes all of them with it."""
        for pid in (self.pid if self.status is None else None, self.init):  # neither is reaped: not reused
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def reap(self, block: bool = False) -> bool:
        """Whether the page's process is gone (its status is then kept) and so is its PID 1, which exits only
        once every process of its namespace has."""
        if self.pid is not None and self.status is None:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
            if pid == 0:
                return False
            self.status = status
            if self.pidfd is not None:
                os.close(self.pidfd)
                self.pidfd = None
        if self.init is not None:
            try:
                os.kill(self.init, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if os.waitpid(self.init, 0 if block else os.WNOHANG)[0] == 0:
                return False
            self.init = None
        return True

    @property
    def exit_code(self) -> int | None:
        return None if self.status is None else os.waitstatus_to_exitcode(self.status)
