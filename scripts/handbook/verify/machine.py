"""What machine a run happens on, named the way records, badges and samples show it.

A CPU result can depend on the instruction set torch dispatches to (ATen's CPU capability) and on the limits set
for oneDNN and MKL, so a machine class is the CPU model plus the capability, plus any limit in force:
"AMD EPYC (AVX512)", "AMD EPYC (AVX2; ONEDNN_MAX_CPU_ISA=AVX2)".
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from functools import lru_cache
from pathlib import Path

from handbook import ROOT
from handbook.verify import paths
from handbook.verify.record import environment, write_atomic

# The variables that limit which instruction set each library uses (see portability.py).
ISA_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


@lru_cache(maxsize=1)
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine()


KNOWN = ROOT / ".handbook-cache" / "capability.json"


def _fingerprint() -> str:
    """What ATen's choice depends on: the CPU, its flags, the capability limit asked for, and the torch build."""
    parts = [
        cpu_model(),
        " ".join(sorted(cpu_flags())),
        os.environ.get("ATEN_CPU_CAPABILITY", ""),
        environment()["torch"],
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def cpu_capability() -> str:
    """ATen's CPU capability in this process (AVX512, AVX2, DEFAULT, ...): what its kernels dispatch to.

    Asking torch costs its import (seconds), so the answer is kept per CPU, flags, limit and torch build: a verify
    that finds every page in its cache never imports torch."""
    key = _fingerprint()
    try:
        known = json.loads(KNOWN.read_text())
    except (OSError, ValueError):
        known = {}
    if isinstance(known.get(key), str):
        return known[key]
    import torch

    backend = getattr(torch.backends, "cpu", None)  # torch releases before 2.0 cannot tell
    found = backend.get_cpu_capability() if hasattr(backend, "get_cpu_capability") else "capability unknown"
    remember(KNOWN, {**known, key: found})
    return found


def known_cpu_label() -> str | None:
    """cpu_label() when the capability of this CPU, limit and torch build is already known, else None (finding it
    out imports torch: the verifier leaves that to the warm process)."""
    try:
        known = json.loads(KNOWN.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(known.get(_fingerprint()), str):
        return None
    return cpu_label()


def remember(path: Path, known: dict) -> None:
    """Keep the answers; never through a symbolic link (paths.py: the file, or a folder on the way, is refused)."""
    try:
        if paths.link_on_the_way(path.parent) is None:
            path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(known, indent=1))
    except OSError:
        pass  # a read-only checkout, or a link on the way: ask torch next time too


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_label() -> str:
    """The machine class of this process: CPU model, capability, and the ISA limits set in its environment."""
    limits = [f"{name}={os.environ[name]}" for name in ISA_VARIABLES[1:] if os.environ.get(name)]
    return f"{cpu_model()} ({'; '.join([cpu_capability(), *limits])})"
