"""torch.compile's check of the C++ compiler, made once per machine rather than once per page.

Before its first CPU kernel, inductor builds and loads a test program for each vector instruction set the CPU has
(AVX2, AVX-512), and keeps the answer in its cache folder: a page's own, since no compile cache is shared between
pages. That cost every compile page seconds (4 s here idle, 18 s under load). The warm process has the check made
once, in a process of its own started before any page, for this torch, compiler and CPU; keeps the answer (a yes
or no written by that process, never by a page: pages cannot see .handbook-cache/) and, where every instruction
set passed, tells pages so through TORCHINDUCTOR_VEC_ISA_OK=1. Where one failed, pages check for themselves.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys

from handbook import ROOT

CACHE = ROOT / ".handbook-cache" / "isa"
VARIABLE = "TORCHINDUCTOR_VEC_ISA_OK"
# Run in a process of its own, in the machine's root: keeps 1 in the file it is given (and prints it) when every
# instruction set this CPU has builds and loads, else 0. Its inductor cache is a temporary folder of its own.
PROBE = """
import os, pathlib, platform, sys, tempfile
from handbook.verify.record import write_atomic
ok = False
with tempfile.TemporaryDirectory(prefix="handbook-isa-") as folder:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
    if platform.machine() in ("x86_64", "AMD64"):
        import torch._inductor.cpu_vec_isa as v
        cpu = v.x86_isa_checker()
        wanted = [isa for isa in v.supported_vec_isa_list if all(flag in cpu for flag in str(isa).split())]
        ok = len(v.valid_vec_isa_list()) == len(wanted)
path = pathlib.Path(sys.argv[1])
path.parent.mkdir(parents=True, exist_ok=True)
write_atomic(path, f"{int(ok)}\\n")
print(int(ok))
"""


def _key() -> str:
    from handbook.verify import machine, record

    compiler = shutil.which(os.environ.get("CXX", "g++")) or "none"
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        version = ""
    parts = [record.environment()["torch"], platform.machine(), compiler, version.split("\n")[0]]
    parts += sorted(machine.cpu_flags())
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


class Check:
    """Started before the warm process leaves the machine's root: the check runs, and keeps its answer, there."""

    def __init__(self):
        path = CACHE / _key()
        self.answer: bool | None = None
        self.process = None
        if path.is_file():
            self.answer = path.read_text().strip() == "1"
        else:
            command = [sys.executable, "-c", PROBE, str(path)]
            self.process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=_dies_with_parent
            )

    def ok(self) -> bool:
        """Whether pages may skip the check (waits for it the first time on this machine)."""
        if self.answer is None:
            out, _ = self.process.communicate()
            self.answer = self.process.returncode == 0 and out.strip() == "1"
        return self.answer


def _dies_with_parent() -> None:
    from handbook.verify import kernel

    kernel.prctl(kernel.PR_SET_PDEATHSIG, 9)


def uses_compile(pages) -> bool:
    return any("torch.compile" in page.text or "_inductor" in page.text for page in pages)
