"""The sandbox a page's examples run in: what this machine allows, and the steps a page's process takes to enter it.

Examples are untrusted code. The verifier never forks a page from itself: a warm process (warm.py), started with
the cleaned environment below, imports torch once and forks each page. On Linux as root, each page's process:

- leaves the verifier's session and process group (its own session), so no signal it sends to a group reaches
  anything but its own processes;
- runs as PID 2 of a PID namespace of its own (cells.py) whose PID 1 dies with the warm process: when it dies the
  kernel kills every process of the page; a per-page cgroup caps the memory and process count of all of them;
- sees a root built for pages (rootfs.py), read-only but for its own fresh `/tmp` and `/dev/shm`;
- has a network namespace holding only `lo` (brought up), IPC objects of its own, and the host name
  `handbook-page`;
- has an environment built from ALLOWED_ENV only, and no capabilities (bounding set emptied, no_new_privs), so it
  cannot undo any of the above.

Where the kernel or the user lacks what this needs, `support()` says so once, loudly, and pages run with what
remains: a forked process in its own session, the clean environment (the warm process never had the caller's),
a Python-level network block and a per-process memory limit.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import socket
import struct
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from handbook.verify import kernel, rootfs

# Environment variables a page sees; everything else (tokens, cloud credentials, proxies) is dropped.
ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "GLIBC_TUNABLES", "LD_LIBRARY_PATH", "PYTHONHASHSEED")
ALLOWED_ENV += ("TORCHINDUCTOR_VEC_ISA_OK",)  # set by the warm process once the compiler was checked (isa.py)
# Thread, ISA and device settings torch, OpenMP, MKL, oneDNN and CUDA read (the portability pass sets them).
ALLOWED_ENV_PREFIXES = ("LC_", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "ATEN_", "ONEDNN_", "DNNL_", "CUDA_", "NVIDIA_")
# Variables whose names say they hold a secret: guarded from 4 characters on. Any other hidden variable is guarded
# from 8 (a shorter value, "1" or "dev", shows up in outputs by chance and would refuse them for nothing).
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASS|KEY|AUTH|CRED|COOKIE|SESSION|PRIVATE|SIGNATURE|CERT", re.I)
NOT_SECRET = {"PWD", "OLDPWD", "HOME", "SHELL", "TERM", "USER", "LOGNAME", "HOSTNAME", "SHLVL", "_", "COLUMNS", "LINES"}
SETUP_FAILED = 71  # exit status of a page whose sandbox could not be entered (EX_OSERR); the log says why

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
CGROUP_V1 = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids")  # required: the caps
FAIRNESS = "cpu"  # optional: equal CPU shares between pages running at once, whatever their thread counts


def clean_environment(environ: dict[str, str]) -> dict[str, str]:
    """The variables from `environ` a page may see."""
    return {k: v for k, v in environ.items() if k in ALLOWED_ENV or k.startswith(ALLOWED_ENV_PREFIXES)}


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the caller's variables no page ever sees: none of them may be written into a page or the record.
    Only the verifier holds them; the warm process and the pages were never given them."""
    environ = os.environ if environ is None else environ
    visible = clean_environment(environ)
    found = set()
    for name, value in environ.items():
        if name in visible or name in NOT_SECRET:
            continue
        if len(value) >= (4 if SECRET_NAME.search(name) else 8):
            found.add(value)
    return sorted(found, key=len, reverse=True)


def contains_secret(text: str, secrets: list[str]) -> bool:
    return any(secret in text for secret in secrets)


# ---------------------------------------------------------------------------------------------------------------
# What this machine allows, found out once per verifier run


@dataclass(frozen=True)
class Support:
    namespaces: bool = False  # mount, network, IPC and PID namespaces, and a root built for pages
    cgroups: bool = False  # per-page v1 memory and pids cgroups
    missing: tuple[str, ...] = ()
    fair: bool = False  # the v1 cpu controller, for equal shares between pages

    @property
    def full(self) -> bool:
        return self.namespaces and self.cgroups


def _probe_namespaces() -> str | None:
    """None when a child can make the namespaces a page needs, else why not."""
    if not sys.platform.startswith("linux"):
        return f"not Linux ({sys.platform})"
    if os.geteuid() != 0:
        return "not running as root (the sandbox does not use user namespaces)"
    if kernel.SYS_PIVOT_ROOT is None:
        return f"no pivot_root known for this architecture ({os.uname().machine})"
    pid = os.fork()
    if pid == 0:
        try:
            flags = kernel.CLONE_NEWNS | kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS
            kernel.unshare(flags | kernel.CLONE_NEWPID)
            kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
            os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return "mount, network, IPC or PID namespaces are refused"
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
    remove_stale_cgroups()
    return None


def remove_stale_cgroups() -> list[str]:
    """Cgroups of warm processes that were killed: end what is left in them and remove them."""
    problems = []
    for controller in (*CONTROLLERS, FAIRNESS):
        for path in (CGROUP_V1 / controller / "handbook").glob("*-*"):
            owner = path.name.split("-")[0]
            if not owner.isdigit() or Path(f"/proc/{owner}").exists():
                continue
            try:
                for pid in (path / "cgroup.procs").read_text().split():
                    os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
            deadline = time.monotonic() + 0.5
            while path.exists():
                try:
                    path.rmdir()
                except OSError as exc:
                    if time.monotonic() > deadline:
                        problems.append(f"{path}: {exc.strerror}")
                        break
                    time.sleep(0.005)
    for problem in problems:
        print(f"WARNING: a cgroup of an earlier run could not be removed: {problem}", file=sys.stderr)
    return problems


def _probe_fairness() -> bool:
    try:
        (CGROUP_V1 / FAIRNESS / "handbook").mkdir(exist_ok=True)
        return True
    except OSError:
        return False


REMAINS = (
    "pages still run in their own session (no signal of theirs reaches the verifier's process group), "
    "in a warm process started without your environment variables, with a Python-level network block and "
    "a per-process memory limit; but they can read and write your files, reach this machine's Unix sockets "
    "and leave processes behind"
)


@lru_cache(maxsize=1)
def support() -> Support:
    """What isolation this machine gives pages; says once on stderr what is missing and what remains."""
    missing = []
    ns = _probe_namespaces()
    if ns:
        missing.append(ns)
    cg = _probe_cgroups() if ns is None else "cgroups not tried without namespaces"
    if cg and ns is None:
        missing.append(cg)
    found = Support(ns is None, cg is None, tuple(missing), cg is None and _probe_fairness())
    if missing:
        print(
            "WARNING: the page sandbox is not available: " + "; ".join(missing) + ".\n"
            f"WARNING: what remains: {REMAINS}. Do not verify pages you have not read on this machine.",
            file=sys.stderr,
            flush=True,
        )
    return found


# ---------------------------------------------------------------------------------------------------------------
# Child side: the steps a freshly forked page process takes before any example runs


def confine(found: Support, folder: str, keep: tuple[int, ...], join, device: str) -> str:
    """Confine this (forked) page process; return its working folder (inside `folder`). Every step raises on
    failure, so that the page never runs with less isolation than `found` promises. `join` moves it into its
    cgroups; `keep` are the only file descriptors it keeps (its channel and log)."""
    os.setsid()  # its own session and process group: kill(0) and killpg reach only the page
    join()
    _close_all_but(keep)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)  # the warm process gone (killed), the page goes too
    if found.namespaces:
        kernel.unshare(kernel.CLONE_NEWNS | kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS)
        kernel.sethostname(rootfs.HOSTNAME)  # the same on every machine; /etc/hosts of the root names it
        _loopback_up()
        rootfs.enter_page_root()
        os.mkdir(folder, 0o700)  # in the page's own /tmp; without namespaces the warm process made it
    work, home, tmp = (os.path.join(folder, name) for name in ("work", "home", "tmp"))
    for path in (work, home, tmp):
        os.mkdir(path)
    if found.namespaces:
        tmp = "/tmp"
    env = clean_environment(os.environ)
    env.update(HOME=home, TMPDIR=tmp)
    if device == "cpu":
        # The CPU pass sees no GPU, as on a CPU-only machine. CUDA reads this when first used, after the fork.
        env["CUDA_VISIBLE_DEVICES"] = ""
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = tmp  # the warm process's tempfile may have cached its own choice before the fork
    if found.namespaces:
        kernel.drop_capabilities()
        kernel.refuse_new_namespaces_and_keyrings()
    return work


def page_folder(found: Support) -> str:
    """The folder a page works in. With namespaces it is made by the page in its own /tmp, and gone with it;
    without, it is made here on the machine's /tmp and removed by `remove_folder` when the page ends."""
    if found.namespaces:
        return f"/tmp/handbook-page-{os.urandom(6).hex()}"
    return tempfile.mkdtemp(prefix="handbook-page-")


def _close_all_but(keep: tuple[int, ...]) -> None:
    """Every descriptor the warm process had open (other pages' channels, its own pipes to the verifier, cgroup
    folders) is closed: fds 0-2 are replaced by the caller, the rest is what `keep` names."""
    low = 3
    for fd in sorted(k for k in keep if k >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def remove_folder(folder: str) -> None:
    """A page's folder on the machine's /tmp (only without namespaces: else it lives in the page's own /tmp)."""
    shutil.rmtree(folder, ignore_errors=True)
