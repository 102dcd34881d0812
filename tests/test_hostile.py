"""Hostile pages against the verifier as readers and CI run it: a process of its own, canaries planted around it.

The test copies the tool into a checkout under /tmp (the page's root must be the same there), plants canaries
(an environment variable, a file in a fake home, files beside the checkout and hidden in it, Unix sockets on /run
and /tmp, an abstract socket and a loopback port that answer with the canary), verifies every page of
tests/fixtures/hostile/ at once, two at a time, next to a control page, and then checks each line of the threat
model in docs/contributing.md ("The sandbox: examples are untrusted code"). No traffic leaves loopback.
"""

import ast
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import processes_with

from handbook import ROOT
from handbook.verify import sandbox

PAGES = Path(__file__).parent / "fixtures" / "hostile"
LATER = ["victim.md"]  # verified in a second run, after the others
pytestmark = pytest.mark.skipif(not sandbox.support().full, reason="the kernel sandbox is not available here")


@dataclass
class World:
    base: Path
    checkout: Path
    token: str
    short: str
    first: subprocess.CompletedProcess
    later: subprocess.CompletedProcess
    results: dict  # name -> row of --results, first and later run
    before: dict  # the checkout's files and their hashes before the runs
    processes_after: list
    folders_after: list
    cgroups_after: list


def _serve(server: socket.socket, answer: bytes) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            conn.sendall(answer)


def _servers(base: Path, token: str) -> dict[str, str]:
    """Unix sockets on /run and /tmp, an abstract one and a loopback port, each answering with the canary."""
    places = {}
    found = []
    run = Path("/run") / f"hb-test-{secrets.token_hex(4)}.sock"
    for key, family, address in [
        ("RUN_SOCKET", socket.AF_UNIX, str(run) if os.access("/run", os.W_OK) else str(base / "run.sock")),
        ("TMP_SOCKET", socket.AF_UNIX, str(base / "tmp.sock")),
        ("ABSTRACT", socket.AF_UNIX, "\0" + f"hb-test-{secrets.token_hex(4)}"),
        ("PORT", socket.AF_INET, ("127.0.0.1", 0)),
    ]:
        server = socket.socket(family)
        server.bind(address)
        server.listen()
        threading.Thread(target=_serve, args=(server, token.encode()), daemon=True).start()
        found.append(server)
        if key == "PORT":
            places[key] = str(server.getsockname()[1])
        else:
            places[key] = address.lstrip("\0")
    places["_servers"] = found
    places["_run"] = run
    return places


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _cgroups() -> set[str]:
    return {str(p) for c in ("memory", "pids", "cpu") for p in Path(f"/sys/fs/cgroup/{c}/handbook").glob("*-*")}


def _verify(checkout: Path, env: dict, pages: list[str], results: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "handbook", "verify", "--device", "cpu", "--no-cache", "--jobs", "2"]
    command += ["--results", str(results), *extra, *pages]
    return subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    base = tmp_path_factory.mktemp("hostile")
    checkout = base / "checkout"
    shutil.copytree(ROOT / "scripts", checkout / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    token = f"hbcanary-{secrets.token_hex(8)}-end"
    short = secrets.token_hex(2)  # 4 characters: a short secret, in a variable whose name says so
    home = base / "home"
    home.mkdir()
    (home / ".netrc").write_text(f"machine example.com password {token}\n")
    (base / "beside-the-checkout.txt").write_text(token)
    (checkout / ".git").mkdir()
    (checkout / ".git" / "config").write_text(f'[remote "origin"]\n\turl = https://x:{token}@example.com/r\n')
    (checkout / ".env").write_text(f"TOKEN={token}\n")
    places = _servers(base, token)
    fill = {
        "CHECKOUT": str(checkout),
        "HOME": str(home),
        "HOME_CANARY": str(home / ".netrc"),
        "BESIDE": str(base),
        "BESIDE_CANARY": str(base / "beside-the-checkout.txt"),
        "SHORT": short,
        **{k: v for k, v in places.items() if not k.startswith("_")},
    }
    (checkout / "docs" / "hostile").mkdir(parents=True)
    for page in sorted(PAGES.glob("*.md")):
        text = page.read_text()
        for key, value in fill.items():
            text = text.replace("{{" + key + "}}", value)
        (checkout / "docs" / "hostile" / page.name).write_text(text)
    before = _snapshot(checkout)
    cgroups_before = _cgroups()
    # Pages make their folders in their own /tmp, so a run leaves none on the machine's. Folders there before the
    # run, or made meanwhile and gone a moment later, belong to other verifiers sharing this machine.
    folders_before = set(Path("/tmp").glob("handbook-page-*"))
    env = dict(os.environ, HB_CANARY_TOKEN=token, HB_SHORT_TOKEN=short, HOME=str(home))
    env["PYTHONPATH"] = str(checkout / "scripts")
    first_pages = [f"docs/hostile/{p.name}" for p in sorted(PAGES.glob("*.md")) if p.name not in LATER]
    try:
        first = _verify(checkout, env, first_pages, base / "first.json")
        later = _verify(checkout, env, [f"docs/hostile/{name}" for name in LATER], base / "later.json", "--no-record")
    finally:
        for server in places["_servers"]:
            server.close()
        places["_run"].unlink(missing_ok=True)
    rows = {}
    for name in ("first.json", "later.json"):
        if (base / name).exists():
            for row in json.loads((base / name).read_text())["examples"]:
                rows[row["name"].split("docs/hostile/")[1]] = row
    time.sleep(0.5)
    processes = processes_with("9876.5")
    for pid in processes:
        os.kill(pid, signal.SIGKILL)
    folders = set(Path("/tmp").glob("handbook-page-*")) - folders_before
    if folders:
        time.sleep(2)
        folders &= set(Path("/tmp").glob("handbook-page-*"))
    folders = sorted(str(p) for p in folders)
    cgroups = sorted(p for p in _cgroups() - cgroups_before if not Path(f"/proc/{Path(p).name.split('-')[0]}").exists())
    return World(base, checkout, token, short, first, later, rows, before, processes, folders, cgroups)


def rows_of(world: World, page: str) -> list[dict]:
    return [
        row
        for name, row in sorted(world.results.items(), key=lambda kv: int(kv[0].split(":")[1]))
        if name.startswith(page + ":")
    ]


def statuses(world: World, page: str) -> list[str]:
    return [row["status"] for row in rows_of(world, page)]


def test_the_run_survives_every_page_and_reports_each_one(world):
    assert world.first.returncode == 1, world.first.stderr[-3000:]
    assert "Traceback" not in world.first.stderr, world.first.stderr[-3000:]
    for page in sorted(p.name for p in PAGES.glob("*.md")):
        assert rows_of(world, page), f"{page}: no outcome reported\n{world.first.stdout[-3000:]}"
    assert statuses(world, "control.md") == ["passed", "passed"], rows_of(world, "control.md")


def test_no_canary_reaches_an_output_the_record_the_report_or_the_checkout(world):
    for where, text in [
        ("stdout", world.first.stdout + world.later.stdout),
        ("stderr", world.first.stderr + world.later.stderr),
        ("results", json.dumps(world.results)),
    ]:
        assert world.token not in text, f"the canary reached the {where}"
    record = (world.checkout / "docs" / "verification.json").read_text()
    assert world.token not in record and world.short not in record
    after = _snapshot(world.checkout)
    before = world.before
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    # The verifier's own files: the record, its lock, and ATen's CPU capability kept per machine (machine.py)
    written = {"docs/verification.json", "docs/.verification.json.lock", ".handbook-cache/capability.json"}
    assert changed <= written, changed
    for name in changed:
        assert world.token not in (world.checkout / name).read_text(), name


def test_the_callers_environment_is_nowhere_in_a_page(world):
    """Not in os.environ, /proc/self/environ, /proc/1, nor anywhere in the page's memory (machine= records it)."""
    record = json.loads((world.checkout / "docs" / "verification.json").read_text())
    outputs = [
        found["output"]
        for per_device in record["pages"]["docs/hostile/environ.md"]["machine_outputs"].values()
        for machines in per_device.values()
        for found in machines.values()
    ]
    assert outputs == ["[]\n"], outputs
    assert statuses(world, "environ.md") == ["passed", "passed"], rows_of(world, "environ.md")


def test_files_outside_the_pages_root_cannot_be_read(world):
    (row,) = rows_of(world, "files.md")
    shown = row["actual"].replace(str(world.base), "BASE")
    assert world.token not in shown, shown
    for line in [
        "/etc/shadow refused: FileNotFoundError",  # not in the page's root at all
        "/etc/passwd READ root:x:0:0:root:/root:/bin/sh",  # a generated one
        "BASE/home/.netrc refused: FileNotFoundError",
        "BASE/beside-the-checkout.txt refused: FileNotFoundError",
        "BASE/checkout/.git/config refused: FileNotFoundError",  # hidden entries of the checkout are covered
        "BASE/checkout/.env READ \n",
        "/proc/1/root/etc/shadow refused: PermissionError",  # PID 1 keeps capabilities the page lacks
        "/home refused: FileNotFoundError",
        "/run refused: FileNotFoundError",
        "BASE/home refused: FileNotFoundError",
        "BASE LISTED ['checkout']",  # only the checkout, re-bound into the page's own /tmp
    ]:
        assert line + "\n" in shown or line.endswith("\n") and line in shown, (line, shown)
    # its own /tmp: its page folder, pytest's, and the checkout's top folder when the checkout itself is under /tmp
    listed = ast.literal_eval(re.search(r"\n/tmp LISTED (\[[^\]]*\])", shown).group(1))
    checkout = [ROOT.resolve().relative_to("/tmp").parts[0]] if ROOT.resolve().is_relative_to("/tmp") else []
    assert sorted(x for x in listed if not x.startswith("handbook-page-")) == sorted(["pytest-of-root", *checkout])
    assert any(x.startswith("handbook-page-") for x in listed), listed


def test_the_machines_sockets_cannot_be_reached(world):
    (row,) = rows_of(world, "sockets.md")
    assert "ANSWERED" not in row["actual"] and row["actual"].count("refused:") == 4, row["actual"]


def test_forged_results_never_pass_a_page(world):
    assert statuses(world, "forged.md") == ["failed", "failed"], rows_of(world, "forged.md")
    rows = rows_of(world, "forged_fds.md")
    assert [r["status"] for r in rows] == ["failed", "failed"]
    assert rows[0]["reason"].startswith("tampered: the page wrote to the verifier's channel"), rows[0]


def test_a_20_mb_exception_fails_its_example_only(world):
    rows = rows_of(world, "huge_error.md")
    assert [r["status"] for r in rows] == ["failed", "passed"], rows
    assert "error cut: 20000" in rows[0]["detail"] and len(rows[0]["detail"]) < 100_000


def test_no_escape_through_processes_proc_privileges_or_the_checkout(world):
    (row,) = rows_of(world, "escape.md")
    assert row["status"] == "passed", row["detail"]
    assert not (world.checkout / "docs" / "planted-by-a-page.md").exists()


def test_nothing_a_page_leaves_reaches_a_later_page(world):
    assert statuses(world, "leftovers.md") == ["passed"], rows_of(world, "leftovers.md")
    assert world.later.returncode == 0, world.later.stdout[-3000:]
    assert statuses(world, "victim.md") == ["passed"], rows_of(world, "victim.md")


def test_no_process_folder_or_cgroup_is_left_behind(world):
    assert world.processes_after == []
    assert world.folders_after == []
    assert world.cgroups_after == []


def test_fd_games_exits_and_the_tools_modules_fail_only_their_own_page(world):
    assert statuses(world, "fds.md") == ["failed", "failed", "failed"], rows_of(world, "fds.md")
    assert statuses(world, "exits.md") == ["passed", "failed", "failed"], rows_of(world, "exits.md")
    assert statuses(world, "modules.md")[1] == "failed", rows_of(world, "modules.md")


def test_limits_hold_and_huge_output_is_cut(world):
    (row,) = rows_of(world, "limits.md")
    assert "refused after some processes: True" in row["actual"], row["actual"][:500]
    assert "67108864" in row["actual"] and "[output cut:" in row["actual"] and len(row["actual"]) < 2 << 20


def test_update_never_writes_a_short_secret_into_a_page(world):
    env = dict(os.environ, HB_SHORT_TOKEN=world.short, PYTHONPATH=str(world.checkout / "scripts"))
    page = world.checkout / "docs" / "hostile" / "environ.md"
    done = _verify(
        world.checkout, env, ["docs/hostile/environ.md"], world.base / "update.json", "--update", "--no-record"
    )
    assert world.short not in page.read_text() and world.short not in done.stdout, done.stdout[-2000:]
