"""`python -m handbook upgrade`: environments, requirements, and a real run of the pinned release against itself."""

import json
import subprocess

from handbook import ROOT
from handbook.releases import changes, envs, upgrade
from handbook.verify import record


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip()] = version.strip()
    return pins


def test_requirements_of_a_candidate_replace_only_torch_and_torchvision():
    reqs = envs.requirements("9.9.9", "8.8.8", full=True)
    assert reqs[:2] == ["torch==9.9.9", "torchvision==8.8.8"]
    assert not any(r.startswith(("torch==", "torchvision==")) for r in reqs[2:])
    others = {f"{n}=={v}" for n, v in pinned().items() if n not in ("torch", "torchvision")}
    assert set(reqs[2:]) == others
    assert envs.requirements("9.9.9", None, full=True)[1] != "torchvision"  # no table entry: none asked for


def test_one_torchvision_table_agrees_with_the_pins_and_each_patch_release():
    pins = pinned()
    assert envs.torchvision_for(pins["torch"]) == pins["torchvision"]
    assert envs.torchvision_for("2.14.0") == "0.29.0" and envs.torchvision_for("2.14.1") == "0.29.1"


def test_installed_release_is_the_pinned_one():
    assert record.environment()["torch"].split("+")[0] == pinned()["torch"]


def _made_by_the_probe(root, version="9.9.9"):
    folder = root / f"torch-{version}"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("")
    (folder / ".complete").write_text(" ".join(envs.requirements(version, "8.8.8")) + "\n")
    return folder


def test_an_environment_with_everything_is_reused_without_installing(tmp_path, monkeypatch):
    folder = _made_by_the_probe(tmp_path)
    (folder / ".complete").write_text(" ".join(envs.requirements("9.9.9", "8.8.8", full=True)) + "\n")
    monkeypatch.setattr(envs, "ENVS", tmp_path)
    monkeypatch.setattr(envs, "env_for", lambda v, root=tmp_path: envs.Env(v, root / f"torch-{v}"))

    def refuse(*args, **kwargs):
        raise AssertionError(f"ran {args[0]}")

    monkeypatch.setattr(subprocess, "run", refuse)
    logged = []
    assert upgrade.ensure_env("9.9.9", "8.8.8", log=logged.append) == folder / "bin" / "python"
    assert logged and "reusing" in logged[0]


def test_the_probe_s_environment_is_topped_up_not_rebuilt(tmp_path, monkeypatch):
    """The version probe and upgrade share .handbook-envs/: one marker, and asking for more installs only that."""
    folder = _made_by_the_probe(tmp_path)
    (folder / "keep").write_text("installed by the probe")
    ran = []

    def pip(command, **kwargs):
        ran.append(command)
        return subprocess.CompletedProcess(command, 0, stdout="")

    monkeypatch.setattr(subprocess, "run", pip)
    env, _ = envs.create("9.9.9", root=tmp_path, torchvision="8.8.8", full=True)
    assert (folder / "keep").exists() and len(ran) == 1 and ran[0][3] == "install"  # no new venv, one pip install
    asked = set(ran[0][ran[0].index("off") + 1 :])
    assert "torch==9.9.9" not in asked and "polib==" + pinned()["polib"] in asked
    assert env.holds() >= set(envs.requirements("9.9.9", "8.8.8", full=True))
    ran.clear()
    envs.create("9.9.9", root=tmp_path)  # what the probe asks for is all there: nothing runs
    assert ran == []


def test_pip_commands_lift_a_machine_wide_constraint():
    pip = envs.pip_environment()
    assert pip["PIP_CONSTRAINT"] == "/dev/null" and pip["PIP_NO_CACHE_DIR"] == "1"


def test_upgrade_to_the_pinned_release_reports_no_change(tmp_path, capsys):
    here = record.environment()["torch"].split("+")[0]
    pages = ["docs/torch/clamp.md", "docs/torch/mm.md"]
    assert upgrade.main(here, out=str(tmp_path), paths=pages, jobs=2) == 0
    report = json.loads((tmp_path / "changes.json").read_text())
    changes.validate(report)
    assert report["entries"] == [], report["entries"][:3]
    assert report["old"] == report["new"] and report["examples"]["old"] == report["examples"]["new"]
    assert report["examples"]["new"]["passed"] > 20
    assert "0 change(s)" in capsys.readouterr().out
    assert (tmp_path / "changes.md").read_text().startswith(f"# Changes: torch {here} → torch {here}")
