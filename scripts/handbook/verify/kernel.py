"""The Linux system calls the sandbox needs and Python 3.11 lacks, through libc. Each raises OSError naming the call.

Nothing here decides anything: sandbox.py, rootfs.py and cells.py say what to confine and how.
"""

from __future__ import annotations

import ctypes
import os
import platform

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_MOVE, MS_REC, MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 8192, 16384, 1 << 18, 1 << 21, 1 << 24
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 22, 24, 38
CLONE_NEWUSER = 0x10000000
MADV_COLLAPSE = 25
# pivot_root has no libc wrapper; its number differs between the two architectures torch ships wheels for.
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
# Per-mount flags as /proc/self/mountinfo spells them: a remount must repeat those it keeps (the kernel refuses to
# drop nosuid, nodev or noexec of a locked mount, and a remount without them asks for that).
MOUNT_OPTIONS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), f"unshare({flags:#x})")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(fd, nstype), f"setns({nstype:#x})")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    args = [None if x is None else os.fsencode(x) for x in (source, target, fstype, data)]
    _check(_libc.mount(args[0], args[1], args[2], ctypes.c_ulong(flags), args[3]), f"mount {source} on {target}")


def umount(target: str, flags: int = 0) -> None:
    _check(_libc.umount2(os.fsencode(target), flags), f"umount {target}")


def sethostname(name: str) -> None:
    data = name.encode()
    _check(_libc.sethostname(data, len(data)), "sethostname")


def pivot_root(new_root: str, put_old: str) -> None:
    if SYS_PIVOT_ROOT is None:
        raise OSError(0, f"pivot_root: no system call number known for {platform.machine()}")
    _check(_libc.syscall(SYS_PIVOT_ROOT, os.fsencode(new_root), os.fsencode(put_old)), "pivot_root")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def drop_capabilities() -> None:
    """Root without capabilities: it cannot mount, leave its namespaces, or gain them back through execve."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable of two 32-bit words: all empty
    _check(_libc.capset(header, data), "capset")


# seccomp: system calls by number per architecture, and what the filter answers them.
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(platform.machine())
_SYSCALLS = {
    "x86_64": {"unshare": 272, "clone": 56, "clone3": 435, "add_key": 248, "request_key": 249, "keyctl": 250},
    "aarch64": {"unshare": 97, "clone": 220, "clone3": 435, "add_key": 217, "request_key": 218, "keyctl": 219},
}.get(platform.machine())
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def refuse_new_namespaces_and_keyrings() -> None:
    """A seccomp filter (after no_new_privs): no user namespace (the one namespace a process without
    capabilities may make; inside it, it would have them all back), no kernel keyring (a store shared by every
    process of the same user, so a channel from one page to the next), and no other system call ABI (32-bit
    calls would pass around the filter). clone3 answers ENOSYS, which makes libc fall back to clone, whose flags
    the filter can read."""
    if _AUDIT_ARCH is None or _SYSCALLS is None:
        raise OSError(0, f"seccomp: no system call numbers known for {platform.machine()}")
    n = _SYSCALLS
    ops = [
        (_LD, 0, 0, 4),  # arch
        (_JEQ, 1, 0, _AUDIT_ARCH),
        (_RET, 0, 0, _ERRNO | _ENOSYS),
        (_LD, 0, 0, 0),  # system call number
        (_JGE, 0, 1, 0x40000000),  # x32 calls on x86_64
        (_RET, 0, 0, _ERRNO | _ENOSYS),
        (_JEQ, 0, 1, n["clone3"]),
        (_RET, 0, 0, _ERRNO | _ENOSYS),
        (_JEQ, 2, 0, n["add_key"]),
        (_JEQ, 1, 0, n["request_key"]),
        (_JEQ, 0, 1, n["keyctl"]),
        (_RET, 0, 0, _ERRNO | _EPERM),
        (_JEQ, 1, 0, n["unshare"]),
        (_JEQ, 0, 3, n["clone"]),
        (_LD, 0, 0, 16),  # flags: the first argument, low 32 bits
        (_JSET, 0, 1, CLONE_NEWUSER),
        (_RET, 0, 0, _ERRNO | _EPERM),
        (_RET, 0, 0, _ALLOW),
    ]
    filters = (_Filter * len(ops))(*[_Filter(*op) for op in ops])
    program = _Program(len(ops), filters)
    _check(_libc.prctl(PR_SET_SECCOMP, 2, ctypes.byref(program), 0, 0), "seccomp")


def collapse_huge_pages() -> int:
    """Back this process's large anonymous mappings by huge pages (Linux 6.1+), so that a fork copies a few
    hundred page-table entries for them instead of tens of thousands. Returns the bytes collapsed; 0 where the
    kernel cannot (older kernels, THP disabled), which only costs speed."""
    huge = 2 << 20
    done = 0
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            if fields[1] != "rw-p" or (len(fields) > 5 and fields[5] != "[heap]"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            start, end = -(-start // huge) * huge, end // huge * huge
            if end - start >= huge and _libc.madvise(start, end - start, MADV_COLLAPSE) == 0:
                done += end - start
    return done
