"""`python -m handbook upgrade VERSION`: what moving the handbook to another torch release would change.

The candidate release is installed into its own environment, `.handbook-envs/torch-VERSION/` (git-ignored, reused
when present, `--prune` removes it afterwards), next to the project's `.venv`. Lint and verify (`--no-record
--no-cache --results`) then run on this same checkout twice: with the baseline's python (the project's own
environment unless `--from VERSION` names another release) and with the candidate's. Each run also writes the API
surface it sees (`changes.surface`). `changes.compare` turns the two into the report: JSON (changes.schema.json)
and a Markdown summary, written to `--out` (default `.handbook-envs/reports/`).

The next release becomes: one command, review the report, `verify --update`, commit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from handbook import ROOT
from handbook.releases import envs


def _shown(path: Path) -> str:
    """A path as the log shows it: relative to the project when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def env_dir(version: str) -> Path:
    return envs.env_for(version).path


def installed_versions(python: Path) -> dict[str, str]:
    """torch and torchvision versions as the environment's own python reports them (without importing torch)."""
    code = (
        "import json, importlib.metadata as m; print(json.dumps({p: m.version(p) for p in ('torch', 'torchvision')}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def ensure_env(version: str, torchvision: str | None = None, log=print) -> Path:
    """The python of the environment holding torch==version and every requirement of the project (envs.create:
    reused when present, topped up when it lacks one, e.g. after the version probe made it)."""
    env = envs.env_for(version)
    if env.exists() and not env.lacks(envs.requirements(version, torchvision, full=True)):
        log(f"reusing {_shown(env.path)}")
        return env.python
    log(f"installing torch {version} and the project's requirements into {_shown(env.path)}")
    env, cost = envs.create(version, torchvision=torchvision, full=True)
    versions = installed_versions(env.python)
    if versions["torch"].split("+")[0] != version:
        raise RuntimeError(f"{env.path} holds torch {versions['torch']}, not {version}")
    log(
        f"installed torch {versions['torch']}, torchvision {versions['torchvision']} in {cost['install_seconds']:.0f} s"
    )
    return env.python


def run_side(python: Path, out: Path, paths: list[str], jobs: int | None, log=print) -> dict:
    """Lint, verify and the API surface with one environment's python, on this checkout; files under out."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
    env.pop("HANDBOOK_NO_REEXEC", None)
    env.pop("GLIBC_TUNABLES", None)
    mod = [str(python), "-m", "handbook"]
    start = time.monotonic()
    lint = subprocess.run([*mod, "lint", *paths], capture_output=True, text=True, cwd=ROOT, env=env)
    (out / "lint.txt").write_text(lint.stdout)
    verify_cmd = [
        *mod,
        "verify",
        "--device",
        "cpu",
        "--no-record",
        "--no-cache",
        "--results",
        str(out / "results.json"),
    ]
    if jobs:
        verify_cmd += ["--jobs", str(jobs)]
    verify = subprocess.run([*verify_cmd, *paths], capture_output=True, text=True, cwd=ROOT, env=env)
    (out / "verify.txt").write_text(verify.stdout + verify.stderr)
    if not (out / "results.json").exists():
        raise RuntimeError(f"verify with {python} wrote no results:\n{verify.stderr[-3000:]}")
    surface = subprocess.run(
        [str(python), "-m", "handbook.releases.changes", "surface", str(out / "surface.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    if surface.returncode:
        raise RuntimeError(f"API surface with {python} failed:\n{surface.stderr[-3000:]}")
    summary = verify.stdout.strip().splitlines()[-1] if verify.stdout.strip() else "?"
    log(f"  {python}: {summary}; {time.monotonic() - start:.0f} s")
    return {"lint": lint.stdout, "seconds": round(time.monotonic() - start, 1)}


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main(
    version: str,
    torchvision: str | None = None,
    baseline: str | None = None,
    out: str | None = None,
    paths: list[str] | None = None,
    jobs: int | None = None,
    prune: bool = False,
) -> int:
    from handbook.releases import changes
    from handbook.verify import record

    start = time.monotonic()
    project = Path(sys.executable)
    here = record.environment()["torch"].split("+")[0]

    def python_for(v: str | None) -> Path:
        if v is None or v == here:
            return project  # the project's own environment already holds this release
        return ensure_env(v, torchvision if v == version else None)

    old_python, new_python = python_for(baseline), python_for(version)
    old_label, new_label = baseline or here, version
    folder = Path(out) if out else envs.ENVS / "reports" / f"torch-{old_label}-to-{new_label}"
    print(f"upgrade report: torch {old_label} ({old_python}) -> torch {new_label} ({new_python})")
    sides = {}
    for side, python in (("old", old_python), ("new", new_python)):
        sides[side] = run_side(python, folder / side, paths or [], jobs)
    report = changes.compare(folder / "old", folder / "new")
    report["run"] = {
        "seconds": round(time.monotonic() - start, 1),
        "environments": {side: _shown(p.parent.parent) for side, p in (("old", old_python), ("new", new_python))},
        "environment_bytes": {v: folder_size(env_dir(v)) for v in {baseline, version} if v and env_dir(v).exists()},
    }
    changes.validate(report)
    (folder / "changes.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "changes.md").write_text(changes.markdown(report), encoding="utf-8")
    counts = report["counts"]
    print(f"{sum(counts.values())} change(s): " + ", ".join(f"{n} {k}" for k, n in counts.items() if n))
    print(f"wrote {folder / 'changes.json'} and {folder / 'changes.md'} in {time.monotonic() - start:.0f} s")
    if prune:
        for v in {baseline, version}:
            if v and env_dir(v).exists() and env_dir(v) not in (project.parent.parent,):
                shutil.rmtree(env_dir(v))
                print(f"pruned {_shown(env_dir(v))}")
    return 0
