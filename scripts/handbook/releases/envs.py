"""Cached virtual environments, one per torch release, for tools that run the handbook under another torch.

    env, cost = envs.create("2.0.1")   # .handbook-envs/torch-2.0.1, with torch, the matching torchvision, the tool's deps
    env.python                         # its interpreter
    envs.create("2.16.0", full=True)   # every requirement of requirements.txt too (`upgrade` runs lint and the site)
    envs.prune("2.0.1")                # delete it (old releases are several GB each)

The one manager of `.handbook-envs/` (the version probe and `upgrade` both use it): one marker, `.complete`,
listing what the environment holds; asked for more, an environment is topped up, never deleted and rebuilt.

Each environment gets the dependencies of its release's time: the torchvision built for it and, for torch
releases built against NumPy 1.x, numpy < 2. The tool's own non-torch requirements are installed at the
project's pins. pip runs without its cache (no copy of old wheels is kept) and without the machine's global
constraint file, which caps torch at the pinned release.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from handbook import ROOT

ENVS = Path(os.environ.get("HANDBOOK_ENVS", ROOT / ".handbook-envs"))
EMPTY_FIND_LINKS = ENVS / ".no-find-links"

# torch minor release -> the torchvision release built for it (torchvision pins torch exactly, so pip's resolver
# rejects a wrong pair). None: no torchvision wheel for this Python.
TORCHVISION = {
    "1.13": None,  # torchvision 0.14.1 has no wheel for Python 3.11
    "2.0": "0.15.2",
    "2.1": "0.16.2",
    "2.2": "0.17.2",
    "2.3": "0.18.1",
    "2.4": "0.19.1",
    "2.5": "0.20.1",
    "2.6": "0.21.0",
    "2.7": "0.22.1",
    "2.8": "0.23.0",
    "2.9": "0.24.1",
    "2.10": "0.25.0",
    "2.11": "0.26.0",
    "2.12": "0.27.1",
    "2.13": "0.28.0",
    "2.14": "0.29.1",
    "2.15": "0.29.2",
}
# A patch release whose torchvision differs from its minor's (each torchvision pins one torch release exactly).
TORCHVISION_OF_RELEASE = {"2.14.0": "0.29.0"}
FIRST_NUMPY2 = (2, 3)
LAST_SIX = (2, 2)  # torch releases before 2.3 were built against NumPy 1.x
# What the tool itself needs to run (verify, the probe): taken at the project's pins from requirements.txt.
TOOL_REQUIREMENTS = ("markdown-it-py", "PyYAML", "jsonschema", "rich", "tensorboard")


def minor(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


def key(version: str) -> tuple[int, ...]:
    """Sort key of a release number: '2.10.0' after '2.9.1'."""
    return tuple(int(x) for x in re.findall(r"\d+", version.split("+")[0])[:3])


def torchvision_for(version: str) -> str | None:
    return TORCHVISION_OF_RELEASE.get(version.split("+")[0], TORCHVISION.get(minor(version)))


def project_requirements() -> list[Requirement]:
    """requirements.txt, read by `packaging` (comments, markers and extras as pip reads them)."""
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [Requirement(line.split("#")[0].strip()) for line in lines if line.split("#")[0].strip()]


def requirements(version: str, torchvision: str | None = None, full: bool = False) -> list[str]:
    """What pip installs into the environment of this torch release: torch, its torchvision (`torchvision` overrides
    the table; no table entry and no override: none), the NumPy of its time, and the tool's own requirements at the
    project's pins (full=True: every other requirement of requirements.txt, as `upgrade` needs)."""
    reqs = [f"torch=={version}"]
    vision = torchvision or torchvision_for(version)
    if vision:
        reqs.append(f"torchvision=={vision}")
    pinned = {canonicalize_name(r.name): str(r) for r in project_requirements()}
    if full:
        reqs += [line for name, line in pinned.items() if name not in ("torch", "torchvision")]
        return reqs
    reqs.append("numpy<2" if key(version)[:2] < FIRST_NUMPY2 else "numpy")
    if key(version)[:2] < LAST_SIX:
        reqs.append("six")  # their torch.utils.tensorboard imports six, which tensorboard no longer brings
    reqs += [pinned.get(canonicalize_name(name), name) for name in TOOL_REQUIREMENTS]
    return reqs


@dataclass
class Env:
    version: str
    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def exists(self) -> bool:
        return (self.path / ".complete").exists()

    def holds(self) -> set[str]:
        """The requirements it was installed with (its marker)."""
        return set((self.path / ".complete").read_text().split()) if self.exists() else set()

    def lacks(self, wanted: list[str]) -> list[str]:
        """Of the requirements wanted, those it was not installed with."""
        held = self.holds()
        return [r for r in wanted if r not in held]

    def size(self) -> int:
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file() and not f.is_symlink())


def env_for(version: str, root: Path = ENVS) -> Env:
    return Env(version, root / f"torch-{version}")


def pip_environment() -> dict[str, str]:
    env = dict(os.environ, PIP_CONSTRAINT="/dev/null", PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    # A machine's local wheel folder (find-links) may hold a CPU build of the same release (2.13.0+cpu here), which
    # pip prefers and the registry's torchvision cannot load beside: only the registry's builds, as the pins say.
    env["PIP_FIND_LINKS"] = str(EMPTY_FIND_LINKS)
    EMPTY_FIND_LINKS.mkdir(parents=True, exist_ok=True)
    env.pop("PYTHONPATH", None)
    return env


def create(
    version: str,
    root: Path = ENVS,
    python: str = sys.executable,
    log=None,
    torchvision: str | None = None,
    full: bool = False,
) -> tuple[Env, dict]:
    """The environment of this torch release, installed if it is not there yet, topped up if it lacks something
    asked for; and what installing cost ({} when nothing was installed): seconds, bytes downloaded (as pip reports
    them) and bytes on disk."""
    env = env_for(version, root)
    wanted = requirements(version, torchvision, full)
    missing = env.lacks(wanted)
    if env.exists() and not missing:
        return env, {}
    if env.path.exists() and not env.exists():  # a half-made environment from an interrupted run
        shutil.rmtree(env.path)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text("*\n")
    started = time.monotonic()
    if not env.exists():
        subprocess.run([python, "-m", "venv", str(env.path)], check=True)
    pip = [str(env.python), "-m", "pip", "install", "--no-cache-dir", "--no-compile", "--progress-bar", "off"]
    proc = subprocess.run(
        [*pip, *missing], env=pip_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if log is not None:
        log.write(proc.stdout)
    if proc.returncode:
        tail = "\n".join(proc.stdout.splitlines()[-15:])
        raise RuntimeError(f"installing torch {version} failed:\n{tail}")
    (env.path / ".complete").write_text(" ".join(sorted(env.holds() | set(wanted))) + "\n")
    cost = {
        "install_seconds": round(time.monotonic() - started, 1),
        "download_bytes": downloaded_bytes(proc.stdout),
        "disk_bytes": env.size(),
    }
    return env, cost


_SIZE = re.compile(r"\(([\d.]+) (kB|MB|GB)\)")
_UNITS = {"kB": 1e3, "MB": 1e6, "GB": 1e9}


def downloaded_bytes(pip_output: str) -> int:
    """The sum of the sizes pip prints for each file it downloads: `Downloading torch-...whl (755.5 MB)`."""
    total = 0.0
    for line in pip_output.splitlines():
        if line.lstrip().startswith("Downloading "):
            m = _SIZE.search(line)
            if m:
                total += float(m.group(1)) * _UNITS[m.group(2)]
    return int(total)


def prune(version: str, root: Path = ENVS) -> None:
    shutil.rmtree(env_for(version, root).path, ignore_errors=True)
