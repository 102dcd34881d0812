"""`python -m handbook verify --portability`: the CPU pass again under every instruction-set level this machine can
imitate, and with another thread count, so that an output that holds on one CPU only cannot land.

Each library picks its kernels by the CPU it finds; each has a variable that caps what it may use. An AVX-512 machine
capped at AVX2 runs the kernels an AVX2 machine runs, so it prints what that machine prints:
- ATen's dispatch: ATEN_CPU_CAPABILITY=default|avx2|avx512 (torch.backends.cpu.get_cpu_capability() reports it);
- oneDNN (GELU, matmul, convolutions on CPU): ONEDNN_MAX_CPU_ISA=SSE41|AVX2|AVX512_CORE|...;
- MKL (BLAS, FFT): MKL_ENABLE_INSTRUCTIONS=SSE4_2|AVX2|AVX512.
Every run is a separate verifier process (the variables are read when torch loads), without cache or record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from handbook import ROOT
from handbook.verify.compare import normalize
from handbook.verify.machine import cpu_capability, cpu_flags


@dataclass(frozen=True)
class Run:
    name: str
    env: dict[str, str]
    jobs: int | None = None

    def describe(self) -> str:
        settings = " ".join(f"{k}={v}" for k, v in self.env.items())
        return f"{self.name} ({settings}{f', --jobs {self.jobs}' if self.jobs else ''})"


# From the most capable level down; each caps all three libraries together.
LEVELS = [
    (
        "avx512",
        {"ATEN_CPU_CAPABILITY": "avx512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE", "MKL_ENABLE_INSTRUCTIONS": "AVX512"},
    ),
    ("avx2", {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}),
    (
        "baseline",
        {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
    ),
]
# CPU features beyond AVX-512 Foundation that oneDNN uses when it may (bf16 matmuls, int8 dot products, AMX).
BEYOND_AVX512_CORE = {"avx512_bf16", "avx512_vnni", "avx512_fp16", "amx_tile", "amx_bf16"}


def plan(capability: str, flags: set[str], cores: int, jobs: int) -> list[Run]:
    """The runs that check something the normal pass did not: lower levels, and the other thread count."""
    order = [name for name, _ in LEVELS]
    native = capability.lower()
    if native.startswith("avx512"):
        below = order if flags & BEYOND_AVX512_CORE else order[1:]  # AVX512_CORE is already all it has
    elif native in order:
        below = order[order.index(native) + 1 :]
    else:  # not x86 (arm64 reports e.g. SVE256): the thread counts still differ
        below = []
    runs = [Run(name, dict(env)) for name, env in LEVELS if name in below]
    normal_threads = max(1, cores // max(1, jobs))
    if normal_threads > 1:
        runs.append(Run("1 thread", {"OMP_NUM_THREADS": "1"}))
    if cores > 1:  # the normal pass here runs one thread per page: check a reader's many-thread run too
        runs.append(Run(f"{cores} threads", {"OMP_NUM_THREADS": str(cores)}, jobs=1))
    return runs


@dataclass
class Result:
    run: Run
    returncode: int
    seconds: float
    summary: str
    passed: int = 0
    failures: list[dict] = field(default_factory=list)
    other_digits: list[str] = field(default_factory=list)  # passed, but printed other digits than the page


def execute(run: Run, paths: list[str]) -> Result:
    with tempfile.TemporaryDirectory(prefix="handbook-portability-") as tmp:
        results = os.path.join(tmp, "results.json")
        command = [sys.executable, "-m", "handbook", "verify", "--device", "cpu", "--no-cache", "--no-record"]
        command += ["--results", results, *(["--jobs", str(run.jobs)] if run.jobs else []), *paths]
        env = {**os.environ, **run.env}  # no compile cache outlives a page, so no run reuses another's kernels
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        lines = [line for line in done.stdout.strip().split("\n") if line]
        summary = lines[-1] if lines else (done.stderr.strip().split("\n") or ["no output"])[-1]
        result = Result(run, done.returncode, seconds, summary)
        if not os.path.exists(results):
            result.failures.append({"name": "(the verifier)", "reason": done.stderr[-3000:], "detail": ""})
            return result
        with open(results, encoding="utf-8") as f:
            for row in json.load(f)["examples"]:
                result.passed += row["status"] == "passed"
                if row["status"] == "failed":
                    result.failures.append(row)
                elif row["status"] == "passed" and row["actual"] is not None and row["reason"] == "":
                    if "..." not in row["expected"] and normalize(row["actual"]) != normalize(row["expected"]):
                        result.other_digits.append(row["name"])
        return result


def main(paths: list[str] | None, jobs: int | None, out=None) -> int:
    out = out or sys.stdout
    import torch  # noqa: F401 - the capability of this machine, unlimited

    cores = os.cpu_count() or 1
    runs = plan(cpu_capability(), cpu_flags(), cores, jobs or cores)
    print(f"portability: native capability {cpu_capability()}, {cores} cores; {len(runs)} runs", file=out, flush=True)
    failed = passed = 0
    for run in runs:
        print(f"running {run.describe()} ...", file=out, flush=True)
        result = execute(run, paths or [])
        print(f"  {result.summary} ({result.seconds:.0f} s)", file=out, flush=True)
        for row in result.failures:
            print(f"FAILED {row['name']} [{run.name}] {row['reason']}", file=out)
            if row.get("detail") and row["detail"] != row["reason"]:
                print("\n".join("    " + line for line in row["detail"].split("\n")), file=out)
        if result.other_digits:
            shown = ", ".join(result.other_digits[:10]) + (" ..." if len(result.other_digits) > 10 else "")
            print(
                f"  {len(result.other_digits)} example(s) printed other last digits, within one unit: {shown}", file=out
            )
        failed += len(result.failures) + (1 if result.returncode not in (0, 1) else 0)
        passed += result.passed
    # the closing line in the form CI reads: examples over all runs
    print(f"portability: {passed} passed, {failed} failed ({len(runs)} runs)", file=out)
    return 1 if failed else 0
