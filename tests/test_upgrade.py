"""`python -m handbook upgrade`: environments, requirements, and a real run of the pinned release against itself."""

import json
import subprocess

from handbook import ROOT
from handbook.releases import changes, upgrade
from handbook.verify import record


def pinned() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip()] = version.strip()
    return pins


def test_requirements_for_a_candidate_replace_only_torch_and_torchvision():
    reqs = upgrade.requirements_for("9.9.9", "8.8.8")
    assert reqs[:2] == ["torch==9.9.9", "torchvision==8.8.8"]
    assert not any(r.startswith(("torch==", "torchvision==")) for r in reqs[2:])
    others = {f"{n}=={v}" for n, v in pinned().items() if n not in ("torch", "torchvision")}
    assert set(reqs[2:]) == others
    assert upgrade.requirements_for("9.9.9", None)[1] == "torchvision"  # pip picks the one that fits


def test_the_torchvision_table_agrees_with_the_pins():
    pins = pinned()
    assert upgrade.TORCHVISION[pins["torch"]] == pins["torchvision"]


def test_installed_release_is_the_pinned_one():
    assert record.environment()["torch"].split("+")[0] == pinned()["torch"]


def test_an_existing_environment_is_reused_without_installing(tmp_path, monkeypatch):
    monkeypatch.setattr(upgrade, "ENVS", tmp_path)
    folder = tmp_path / "torch-9.9.9"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("")
    (folder / ".installed").write_text("torch 9.9.9, torchvision 8.8.8\n")

    def refuse(*args, **kwargs):
        raise AssertionError(f"ran {args[0]}")

    monkeypatch.setattr(subprocess, "run", refuse)
    logged = []
    assert upgrade.ensure_env("9.9.9", log=logged.append) == folder / "bin" / "python"
    assert logged and "reusing" in logged[0]


def test_pip_commands_lift_a_machine_wide_constraint():
    pip = upgrade.envs.pip_environment()
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
