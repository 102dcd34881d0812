"""The filesystem a page sees: a root built for pages, not the machine's.

Built once, in the warm process, in a mount namespace of its own (`enter_base_root`): a tmpfs holding, read-only,
the system's programs and libraries (`/usr` and its links), a few files of `/etc` (the loader's cache, time zone,
generated `passwd`, `group`, `hosts`), the device nodes of `DEVICES` (and the GPU's), a fresh `/sys`, the
interpreter and its packages, and the checkout without its top-level hidden entries (`.git` can hold credentials).
Nothing else exists there: not the caller's home, `/root`, `/run`, the machine's `/tmp`, `/etc/shadow`, nor any
Unix socket of the machine. Then `pivot_root` moves the warm process into it and the machine's root is detached.

Each page then mounts, in its own mount namespace (`enter_page_root`): a fresh tmpfs on `/tmp` (its folder lives
there) and on `/dev/shm`, and the `/proc` of its PID namespace. What lives under `/tmp` on the machine (a clone or
a virtual environment there) is bound again inside the page's `/tmp`, so the page sees the same root wherever the
checkout is.

Every step either succeeds or raises RootError: a page never runs in a root that is only partly built. The last
step reads the mount table back and refuses any mount that is writable, except the page's `/tmp` and `/dev/shm`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from handbook import ROOT
from handbook.verify import kernel
from handbook.verify.kernel import MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_RDONLY, MS_REC, MS_REMOUNT

SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "os-release",
    "debian_version",
    "alternatives",
    "protocols",
    "services",
    "mime.types",
    "gai.conf",
    "host.conf",
    "fonts",
)
HOSTNAME = "handbook-page"  # every page's host name (its own UTS namespace), resolved on its loopback
GENERATED = {
    "passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "group": "root:x:0:\nnogroup:x:65534:\n",
    "hosts": f"127.0.0.1\tlocalhost {HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n",  # its FQDN: localhost
    "nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\n",
    "resolv.conf": "",
    "hostname": f"{HOSTNAME}\n",
}
DEVICES = ("null", "zero", "full", "random", "urandom")
LINKS = {"dev/fd": "/proc/self/fd", "dev/stdin": "/proc/self/fd/0", "dev/stdout": "/proc/self/fd/1"}
LINKS["dev/stderr"] = "/proc/self/fd/2"
WRITABLE = ("/tmp", "/dev/shm")  # the only writable mounts of a page: both its own, fresh, gone with it
STAGE = "/.handbook/stage"  # paths that live under the machine's /tmp, bound again into each page's /tmp
# Where the new root is assembled, in the warm process's own mount namespace: the first of these that is not
# (an ancestor of) a path bound into it.
ASSEMBLY = ("/mnt", "/media", "/srv", "/opt", "/var/tmp", "/tmp")


class RootError(OSError):
    """A step of building a page's root failed: the page must not run."""


def needed_paths() -> list[str]:
    """Real paths of the interpreter, its standard library and packages, and the tool: bound read-only."""
    found = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *filter(None, sys.path))
        if os.path.exists(p)
    }
    found.add(os.path.dirname(os.path.realpath(sys.executable)))
    found.add(str(Path(__file__).resolve().parents[2]))  # the tool itself, for imports made lazily in a page
    for path in found:
        if path == "/":
            raise RootError(0, "the interpreter's search path includes /: a page would see the whole machine")
    return sorted(found)


def _outermost(paths: list[str]) -> list[str]:
    """The paths not inside another of them: one bind each covers the rest."""
    kept: list[str] = []
    for path in sorted(set(paths), key=lambda p: (p.count("/"), p)):
        if not any(_within(path, k) for k in kept):
            kept.append(path)
    return kept


def lexical_paths() -> list[str]:
    """Paths the interpreter names as they are written (through symbolic links): each must resolve in the root."""
    return [p for p in (sys.executable, sys.prefix, sys.exec_prefix, *filter(None, sys.path)) if os.path.exists(p)]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _step(what: str, fn, *args) -> None:
    try:
        fn(*args)
    except OSError as exc:
        raise RootError(exc.errno or 0, f"building the pages' root: {what}: {exc.strerror or exc}") from exc


def _bind(new: str, source: str) -> None:
    """Bind `source` (a file or folder of the machine) at the same path in the new root."""
    target = new + source
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            open(target, "w").close()
    _step(f"bind {source}", kernel.mount, source, target, None, MS_BIND | MS_REC)


def _link_or_bind(new: str, path: str) -> None:
    if os.path.islink(path):
        os.makedirs(os.path.dirname(new + path), exist_ok=True)
        os.symlink(os.readlink(path), new + path)
    elif os.path.exists(path):
        _bind(new, path)


def _mirror_links(new: str, path: str) -> None:
    """Create in the new root the symbolic links `path` goes through on the machine (a venv linked from the
    checkout, `bin/python` into pyenv), so that it resolves there as it does here."""
    current = "/"
    for part in Path(path).parts[1:]:
        step = os.path.join(current, part)
        if os.path.islink(step):
            if not os.path.lexists(new + step):
                os.makedirs(new + current, exist_ok=True)
                os.symlink(os.readlink(step), new + step)
            current = os.path.realpath(step)
        else:
            current = step


def _assembly_point(bound: list[str]) -> str:
    for candidate in ASSEMBLY:
        if os.path.isdir(candidate) and not os.path.islink(candidate):
            if not any(_within(b, candidate) or _within(candidate, b) for b in bound):
                return candidate
    raise RootError(0, f"building the pages' root: no folder to assemble it in (tried {', '.join(ASSEMBLY)})")


def mounts(mountinfo: str | None = None) -> list[tuple[str, int, bool]]:
    """(mount point, flags to keep on a remount, read-only) of every mount this process sees."""
    if mountinfo is None:
        with open("/proc/self/mountinfo") as f:
            mountinfo = f.read()
    found = []
    for line in mountinfo.splitlines():
        fields = line.split()
        point = fields[4].encode().decode("unicode_escape")  # spaces and the like come octal-escaped
        options = fields[5].split(",")
        flags = 0
        for option in options:
            flags |= kernel.MOUNT_OPTIONS.get(option, 0)
        found.append((point, flags, "ro" in options))
    return found


def check_read_only(mountinfo: str | None = None, writable: tuple[str, ...] = ()) -> None:
    """Raise RootError unless every mount is read-only, but those named in `writable`."""
    open_ = [point for point, _, ro in mounts(mountinfo) if not ro and point not in writable]
    if open_:
        raise RootError(0, f"the page's root has writable mounts: {', '.join(open_)}")


def enter_base_root() -> None:
    """Move this process (the warm process, before it forks any page) into a new root built for pages."""
    _step("a mount namespace", kernel.unshare, kernel.CLONE_NEWNS)
    _step("private mounts", kernel.mount, None, "/", None, MS_REC | kernel.MS_PRIVATE)
    checkout = os.path.realpath(ROOT)
    needed = needed_paths()
    bound = _outermost([*needed, checkout])
    new = _assembly_point(bound)
    _step("the root's tmpfs", kernel.mount, "tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for folder in ("proc", "sys", "dev", "tmp", "etc", ".handbook/old", STAGE[1:]):
        os.makedirs(f"{new}/{folder}", exist_ok=True)
    for name in SYSTEM:
        _link_or_bind(new, f"/{name}")
    for name in ETC:
        _link_or_bind(new, f"/etc/{name}")
    for name, text in GENERATED.items():
        Path(f"{new}/etc/{name}").write_text(text)
    _step("/dev", kernel.mount, "tmpfs", f"{new}/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755")
    os.makedirs(f"{new}/dev/shm")
    _nvidia_nodes()
    gpu = sorted(p.name for p in Path("/dev").glob("nvidia*"))
    for name in (*DEVICES, *gpu):
        if os.path.exists(f"/dev/{name}"):
            _bind(new, f"/dev/{name}")
    for link, target in LINKS.items():
        os.symlink(target, f"{new}/{link}")
    for path in bound:
        _bind(new, path)
    _mask_hidden(new, checkout, needed)
    for path in lexical_paths():
        _mirror_links(new, path)
    for i, path in enumerate(p for p in bound if _within(p, "/tmp")):
        os.makedirs(f"{new}{STAGE}/{i}")
        # from the new root's view of it, hidden entries covered: a page binds this copy into its own /tmp
        _step(f"stage {path}", kernel.mount, new + path, f"{new}{STAGE}/{i}", None, MS_BIND | MS_REC)
        Path(f"{new}{STAGE}/{i}.path").write_text(path)
    _step("/proc", kernel.mount, "proc", f"{new}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _step("/sys", kernel.mount, "sysfs", f"{new}/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for point, flags, readonly in mounts():
        if _within(point, new) and not readonly:
            _step(f"read-only {point}", kernel.mount, None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    _step("pivot_root", kernel.pivot_root, new, f"{new}/.handbook/old")
    os.chdir("/")
    _step("detach the machine's root", kernel.umount, "/.handbook/old", kernel.MNT_DETACH)
    check_read_only()


def _nvidia_nodes() -> None:
    """The driver makes /dev/nvidia-uvm when CUDA is first used; the pages' /dev is fixed before that, so make it
    now, as CUDA itself would (nvidia-modprobe ships with the driver)."""
    modprobe = shutil.which("nvidia-modprobe")
    if modprobe and os.path.exists("/dev/nvidiactl") and not os.path.exists("/dev/nvidia-uvm"):
        subprocess.run([modprobe, "-u", "-c=0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)


def _mask_hidden(new: str, checkout: str, needed: list[str]) -> None:
    """Cover the checkout's top-level hidden entries (.git, caches, .env files) unless the interpreter lives there."""
    for entry in sorted(os.listdir(checkout)):
        path = os.path.join(checkout, entry)
        if not entry.startswith(".") or os.path.islink(path) or any(_within(n, path) for n in needed):
            continue
        if os.path.isdir(path):
            flags = MS_RDONLY | MS_NOSUID | MS_NODEV
            _step(f"hide {path}", kernel.mount, "tmpfs", new + path, "tmpfs", flags, "mode=0755")
        else:
            empty = f"{new}/.handbook/empty"
            if not os.path.exists(empty):
                open(empty, "w").close()
            _step(f"hide {path}", kernel.mount, empty, new + path, None, MS_BIND)


def enter_page_root() -> None:
    """In a page's own mount namespace: its private /tmp and /dev/shm, and /proc of its PID namespace."""
    _step("/tmp", kernel.mount, "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    stage = Path(STAGE)
    for source in sorted(stage.glob("*.path")):
        path = source.read_text()
        os.makedirs(path, exist_ok=True)
        _step(f"{path} in the page's /tmp", kernel.mount, str(source.with_suffix("")), path, None, MS_BIND | MS_REC)
    _step("/dev/shm", kernel.mount, "tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    _step("/proc", kernel.mount, "proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    check_read_only(writable=WRITABLE)
