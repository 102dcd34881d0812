"""The sandbox a page's examples run in: kernel isolation applied to the forked child, so the warm fork stays.

Examples are untrusted code. Each page gets, on Linux as root:

- a PID namespace whose init is a tiny `sleep` that dies with the verifier (parent-death signal); when it dies the
  kernel kills every process of the page, however it detached itself (setsid, double fork);
- a per-page cgroup (v1 memory, pids, freezer) capping the memory and process count of the page and all its
  children, on the CPU and the CUDA pass alike;
- a mount namespace in which every mount is read-only, with fresh tmpfs on /tmp (the page's folder lives there)
  and /dev/shm, the caller's home hidden, and /proc showing only the page's processes;
- a network namespace holding only `lo`, brought up, so loopback servers work and nothing leaves the machine;
- an environment built from ALLOWED_ENV only, and no capabilities (bounding set emptied, no_new_privs), so the
  page cannot undo any of the above.

Where the kernel or the user lacks what this needs, `support()` says so once, loudly, and pages run with the older
isolation (a fork, a Python-level network block, RLIMIT_DATA).
"""

from __future__ import annotations

import ctypes
import fcntl
import itertools
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from handbook import ROOT

# Environment variables a page sees; everything else (tokens, cloud credentials, proxies) is dropped.
ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "GLIBC_TUNABLES", "LD_LIBRARY_PATH", "PYTHONHASHSEED")
# Thread, ISA and device settings torch, OpenMP, MKL, oneDNN and CUDA read (the portability pass sets them).
ALLOWED_ENV_PREFIXES = ("LC_", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "ATEN_", "ONEDNN_", "DNNL_", "CUDA_", "NVIDIA_")
PIDS_MAX = 1024  # processes and threads of one page (DataLoader workers, torch's thread pools)

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_MOVE, MS_REC, MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 8192, 16384, 1 << 18, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
_MOUNT_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
CGROUP_V1 = Path("/sys/fs/cgroup")
# The one folder outside its own that a page may write: torch.compile's caches (C++ headers, kernels), shared by
# pages so that each does not recompile everything. A page can put files there that a later page's compile reads:
# that can change a later page's outcome, never reach outside the sandbox.
COMPILE_CACHE = ROOT / ".handbook-cache" / "compile"


def compile_cache() -> Path:
    """The compile cache of this instruction-set setting: inductor keys its kernels without every ISA limit, so a
    kernel compiled for AVX-512 must not be reused by a run capped at the baseline (it fails to compile there)."""
    from handbook.verify.machine import ISA_VARIABLES

    limits = "-".join(os.environ[name] for name in ISA_VARIABLES if os.environ.get(name))
    return COMPILE_CACHE / (re.sub(r"[^A-Za-z0-9_.-]", "_", limits) or "native")


CONTROLLERS = ("memory", "pids", "freezer")

_libc = ctypes.CDLL(None, use_errno=True)
_counter = itertools.count()


def _call(fn, *args) -> None:
    if fn(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{fn.__name__}{args}: {os.strerror(err)}")


def _unshare(flags: int) -> None:
    _call(_libc.unshare, flags)


def _mount(source, target, fstype, flags: int, data=None) -> None:
    enc = [None if x is None else os.fsencode(x) for x in (source, target, fstype, data)]
    _call(_libc.mount, enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3])


def clean_environment(environ: dict[str, str]) -> dict[str, str]:
    """The variables from `environ` a page may see."""
    return {k: v for k, v in environ.items() if k in ALLOWED_ENV or k.startswith(ALLOWED_ENV_PREFIXES)}


def secret_values(environ: dict[str, str] | None = None, shortest: int = 8) -> list[str]:
    """Values of the caller's variables a page never sees: none of them may be written into a page."""
    environ = os.environ if environ is None else environ
    visible = clean_environment(environ)
    ignored = {"PWD", "OLDPWD", "HOME", "SHELL", "TERM", "USER", "LOGNAME", "HOSTNAME", "SHLVL", "_"}
    return sorted(
        {v for k, v in environ.items() if k not in visible and k not in ignored and len(v) >= shortest},
        key=len,
        reverse=True,
    )


# ---------------------------------------------------------------------------------------------------------------
# What this machine allows, found out once per verifier run


@dataclass(frozen=True)
class Support:
    namespaces: bool = False  # mount + network namespaces in the page's process, and a PID namespace per page
    cgroups: bool = False  # per-page v1 memory/pids/freezer cgroups
    missing: tuple[str, ...] = ()
    init: tuple[str, ...] = ()  # the command run as each page's PID 1

    @property
    def full(self) -> bool:
        return self.namespaces and self.cgroups


def _probe_namespaces() -> str | None:
    """None when a child can make mount and network namespaces and this process a PID namespace, else why not."""
    if not sys.platform.startswith("linux"):
        return f"not Linux ({sys.platform})"
    if os.geteuid() != 0:
        return "not running as root (the sandbox does not use user namespaces)"
    pid = os.fork()
    if pid == 0:
        try:
            _unshare(CLONE_NEWNS | CLONE_NEWNET)
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return "mount or network namespaces are refused"
    try:
        with _PidNamespace():
            pass
    except OSError as exc:
        return f"PID namespaces are refused ({exc.strerror})"
    return None


def _probe_cgroups() -> str | None:
    for name in CONTROLLERS:
        base = CGROUP_V1 / name
        if not (base / "cgroup.procs").exists():
            return f"no cgroup v1 {name} hierarchy (cgroup v2-only machines are not supported yet)"
        try:
            (base / "handbook").mkdir(exist_ok=True)
        except OSError as exc:
            return f"cannot create cgroups under {base} ({exc.strerror})"
    _remove_stale_cgroups()
    return None


def _init_command() -> tuple[str, ...]:
    setpriv, sleep = shutil.which("setpriv"), shutil.which("sleep")
    if setpriv and sleep:
        return (setpriv, "--pdeathsig", "KILL", "--", sleep, "infinity")
    code = "import ctypes,signal;ctypes.CDLL(None).prctl(1,9);signal.pause()"
    return (sys.executable, "-S", "-I", "-c", code)


@lru_cache(maxsize=1)
def support() -> Support:
    """What isolation this machine gives pages; says once on stderr what is missing."""
    missing = []
    ns = _probe_namespaces()
    if ns:
        missing.append(ns)
    cg = _probe_cgroups() if ns is None else "cgroups not tried without namespaces"
    if cg and ns is None:
        missing.append(cg)
    found = Support(ns is None, cg is None, tuple(missing), _init_command())
    if missing:
        print(
            "WARNING: the page sandbox is not available: " + "; ".join(missing) + ".\n"
            "WARNING: examples run with the older isolation only (forked process, Python-level network block, "
            "per-process memory limit): they can write your files, read your environment and leave processes.",
            file=sys.stderr,
            flush=True,
        )
    return found


# ---------------------------------------------------------------------------------------------------------------
# Parent side: a page's cell (cgroups + PID namespace with its init), made before the fork and ended after


class _PidNamespace:
    """Within this block, processes this one starts land in a new PID namespace (the first is its init), or in
    that of process `of`. No thread may be started within it (the kernel refuses)."""

    def __init__(self, of: int | None = None):
        self.of = of  # join the PID namespace of this process rather than make a new one

    def __enter__(self):
        self.own = os.open("/proc/self/ns/pid", os.O_RDONLY)
        try:
            if self.of is None:
                _unshare(CLONE_NEWPID)
            else:
                fd = os.open(f"/proc/{self.of}/ns/pid", os.O_RDONLY)
                try:
                    _call(_libc.setns, fd, CLONE_NEWPID)
                finally:
                    os.close(fd)
        except OSError:
            os.close(self.own)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            _call(_libc.setns, self.own, CLONE_NEWPID)  # back to ours, for the next page's namespace
        finally:
            os.close(self.own)


@dataclass
class Cell:
    """Everything that holds one page's processes. `start` forks the page inside it; `end` kills all of it."""

    cgroups: list[Path] = field(default_factory=list)
    init: subprocess.Popen | None = None
    joined: tuple[int, int] | None = None  # a pipe: the parent writes a byte once the page is in its cgroups
    log: int | None = None  # fd the page's process logs to (its own fd 1 and 2 outside examples)
    foreign: list[int] = field(default_factory=list)  # fds of other pages the forked child must close

    @classmethod
    def create(cls, memory_limit: int | None) -> Cell:
        found = support()
        cell = cls()
        if found.cgroups:
            name = f"{os.getpid()}-{next(_counter)}"
            for controller in CONTROLLERS:
                path = CGROUP_V1 / controller / "handbook" / name
                path.mkdir()
                cell.cgroups.append(path)
            if memory_limit:
                (CGROUP_V1 / "memory" / "handbook" / name / "memory.limit_in_bytes").write_text(str(memory_limit))
            (CGROUP_V1 / "pids" / "handbook" / name / "pids.max").write_text(str(PIDS_MAX))
            cell.joined = os.pipe()
        return cell

    def start(self, process) -> None:
        """Start the page's process (a multiprocessing.Process) as PID 2 of a new PID namespace."""
        found = support()
        early = None
        if found.namespaces:
            with _PidNamespace():
                self.init = subprocess.Popen(
                    found.init, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            if self.joined:
                # The first cgroup move after a quiet spell waits for an RCU grace period (10-50 ms here). Moving
                # the init first, from a thread, lets that wait overlap the fork's copy of the page tables; the
                # page's own move right after then finds the grace period passed.
                early = threading.Thread(target=self._join, args=(self.init.pid,))
                early.start()
            with _PidNamespace(of=self.init.pid):
                process.start()
        else:
            process.start()
        if early is not None:
            early.join()
        if self.joined:
            self._join(process.pid)
            os.write(self.joined[1], b"1")
            for fd in self.joined:
                os.close(fd)
            self.joined = None

    def _join(self, pid: int) -> None:
        for path in self.cgroups:
            (path / "cgroup.procs").write_text(str(pid))

    def kill(self) -> None:
        """Kill every process of the page: the namespace's init takes all of them with it; the cgroup the rest."""
        if self.init is not None and self.init.poll() is None:
            self.init.kill()
        freezer = next((p for p in self.cgroups if p.parent.parent.name == "freezer"), None)
        if freezer is not None and _pids(freezer):
            (freezer / "freezer.state").write_text("FROZEN")
            for pid in _pids(freezer):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            (freezer / "freezer.state").write_text("THAWED")

    def close(self, wait: float = 5.0) -> None:
        """After the page's process was joined: reap the init and remove the cgroups."""
        self.kill()
        if self.init is not None:
            self.init.wait()
        deadline = time.monotonic() + wait
        for path in self.cgroups:
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.005)


def _pids(cgroup: Path) -> list[int]:
    try:
        return [int(x) for x in (cgroup / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _remove_stale_cgroups() -> None:
    """Cgroups of verifiers that were killed: end what is left in them and remove them."""
    for controller in CONTROLLERS:
        for path in (CGROUP_V1 / controller / "handbook").glob("*-*"):
            owner = path.name.split("-")[0]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                cell = Cell(cgroups=[path])
                if controller == "freezer":
                    cell.kill()
                cell.close(wait=0.5)


# ---------------------------------------------------------------------------------------------------------------
# Child side: applied in the forked page process before any example runs


def enter(cell: Cell, workdir: str) -> str:
    """Confine this (forked) process; returns the page's working directory. Only what `support()` found."""
    found = support()
    if found.namespaces:
        _call(_libc.prctl, PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        compile_cache().mkdir(parents=True, exist_ok=True)
        _unshare(CLONE_NEWNS | CLONE_NEWNET)
        _loopback_up()
        _read_only_filesystem(workdir)
    work = os.path.join(workdir, "work")
    home = os.path.join(workdir, "home")
    os.makedirs(work, exist_ok=True)
    os.makedirs(home, exist_ok=True)
    env = clean_environment(os.environ)
    tmp = "/tmp"
    if found.namespaces and not private_tmp():
        tmp = os.path.join(workdir, "tmp")
        os.makedirs(tmp, exist_ok=True)
    env.update(HOME=home, TMPDIR=tmp)
    import tempfile

    tempfile.tempdir = tmp  # the parent's tempfile may have cached its own choice before the fork
    if found.namespaces:
        cache = compile_cache()
        env.update(TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"), TRITON_CACHE_DIR=str(cache / "triton"))
    os.environ.clear()
    os.environ.update(env)
    if cell.joined:
        os.close(cell.joined[1])
        if os.read(cell.joined[0], 1) != b"1":  # the verifier is gone
            os._exit(75)
        os.close(cell.joined[0])
    if found.namespaces:
        _drop_capabilities()
    return work


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _mounts() -> list[tuple[str, int, bool]]:
    """(mount point, flags to keep, read-only already) of every mount, as this process sees them."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")  # spaces and the like come octal-escaped
            options = fields[5].split(",")
            flags = 0
            for option in options:
                flags |= _MOUNT_FLAGS.get(option, 0)
            found.append((point, flags, "ro" in options))
    return found


def _kept_under_home(home: Path) -> list[Path]:
    """Folders right under the home that the running interpreter, its packages or the checkout live in."""
    needed = [Path(sys.executable).resolve(), Path(sys.prefix), Path(sys.base_prefix), ROOT]
    needed += [Path(p) for p in sys.path if p]
    kept = set()
    for path in needed:
        try:
            rel = path.resolve().relative_to(home)
        except ValueError:
            continue
        if rel.parts:
            kept.add(home / rel.parts[0])
    return sorted(kept)


def private_tmp() -> bool:
    """Whether /tmp can be covered by a fresh tmpfs: not when the checkout or the interpreter lives under it (a
    clone in /tmp, a venv there), which the page must still read. Then /tmp turns read-only like the rest, and
    TMPDIR points into the page's folder."""
    needed = [ROOT, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent]
    return not any(p.resolve().is_relative_to("/tmp") for p in needed)


def _read_only_filesystem(workdir: str) -> None:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    mounts = _mounts()
    # A fresh /tmp and /dev/shm (DataLoader workers share tensors there); the page's folder is a tmpfs of its own.
    if private_tmp():
        _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    else:  # on the machine's /tmp: the parent removes this folder when the page ends
        os.makedirs(workdir, exist_ok=True)
    home = Path(os.environ.get("HOME") or "/").resolve()
    hidden_home = home != Path("/") and not ROOT.is_relative_to(home) and home.is_dir()
    kept = _kept_under_home(home) if hidden_home else []
    staged = []
    for i, path in enumerate(kept):
        # Keep what runs the page (pyenv's interpreter, say) visible while an empty tmpfs covers the home.
        # on a fresh /tmp, or, when /tmp is shared with the machine, in this page's own folder
        target = f"/tmp/.keep{i}" if private_tmp() else os.path.join(workdir, f".keep{i}")
        os.mkdir(target)
        _mount(str(path), target, None, MS_BIND | MS_REC)
        staged.append((target, path))
    # A mount of its own, made before the others turn read-only (a bind mount copies its source's flags), and
    # not in `mounts`, so it stays writable.
    _mount(str(COMPILE_CACHE), str(COMPILE_CACHE), None, MS_BIND)
    for point, flags, readonly in mounts:
        if point == "/proc" or readonly:
            continue
        try:
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        except OSError:
            if point == "/":
                raise
    if hidden_home:
        _mount("tmpfs", str(home), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
        for target, path in staged:
            os.mkdir(path)
            _mount(target, str(path), None, MS_MOVE)
            _mount(None, str(path), None, MS_REMOUNT | MS_BIND | MS_RDONLY)
        _mount(None, str(home), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    # /proc of the page's own PID namespace: the verifier and other pages are not in it.
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)
    os.makedirs(workdir, exist_ok=True)
    _mount("tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")


def _drop_capabilities() -> None:
    """Root without capabilities: cannot remount, leave its namespaces, or gain them back through execve."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        _call(_libc.prctl, PR_CAPBSET_DROP, cap, 0, 0, 0)
    _call(_libc.prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable of two 32-bit words: all empty
    _call(_libc.capset, header, data)
