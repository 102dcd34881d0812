"""`python -m handbook versions`: version history of every API, measured by running each torch release.

    versions probe [RELEASES...]   install each release in a cached env, write its shard, prune the env, merge
    versions shard --out FILE       probe the torch of this interpreter (what `probe` runs inside each env)
    versions merge [SHARDS...]      merge shards into versions/history.json (validated against its schema)
    versions cost                   download, time and disk of each probed release

A shard is one release's result (versions/shards/torch-X.json); shards are independent, so they can run on
separate machines and merge afterwards. The merged data is shaped like MDN's browser-compat-data: per API the
release it was first found in, per parameter added/removed/default changes, the deprecation, and per example the
releases whose output is the one the page shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

from handbook import ROOT
from handbook.lint.version_tags import HISTORY, added_in_2x, api_added_in_2x, expected_tags, load  # noqa: F401 (the data's readers)
from handbook.releases import envs

HERE = ROOT / "versions"
SHARDS = HERE / "shards"
SCHEMA = Path(__file__).with_name("versions.schema.json")

# The last patch of every minor release from 1.13 to the pinned one: what `probe` runs by default, newest and
# oldest first so that a run cut short still spans the range.
RELEASES = (
    "1.13.1", "2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1",
    "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0",
)  # fmt: skip


def write(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def probe_order(releases) -> list[str]:
    """Newest, oldest, then the rest from both ends inwards."""
    ordered = sorted(releases, key=envs.key)
    out = []
    while ordered:
        out.append(ordered.pop())
        if ordered:
            out.append(ordered.pop(0))
    return out


def shard_path(release: str, folder: Path = SHARDS) -> Path:
    return folder / f"torch-{release}.json"


def _installed_torch(python: Path | str) -> str | None:
    proc = subprocess.run(
        [str(python), "-c", "import torch; print(torch.__version__.split('+')[0])"],
        capture_output=True,
        text=True,
        env=_clean_env(),
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def probe_release(release: str, folder: Path = SHARDS, force: bool = False, keep_env: bool = False, log=print):
    """Write this release's shard: in this interpreter when its torch is that release, else in a cached env
    made for it (pruned afterwards unless keep_env). Resumable: a release whose shard exists is skipped, and
    pages whose examples did not change since that shard are not run again."""
    out = shard_path(release, folder)
    old = json.loads(out.read_text(encoding="utf-8")) if out.exists() and not force else None
    cost: dict = dict((old or {}).get("cost", {}))
    python: Path | str = sys.executable
    made = False
    if _installed_torch(sys.executable) != release:
        made = not envs.env_for(release).exists()  # only an environment made here is pruned (not upgrade's)
        env, installed = envs.create(release, log=open(os.devnull, "w"))
        cost.update(installed)
        python = env.python
    started = time.monotonic()
    cmd = [str(python), "-m", "handbook", "versions", "shard", "--out", str(out)]
    if old is not None:
        cmd += ["--reuse", str(out)]
    env_vars = dict(_clean_env(), PYTHONPATH=str(ROOT / "scripts"))
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env_vars, capture_output=True, text=True)
    finally:
        if made and not keep_env:
            envs.prune(release)
    if proc.returncode:
        raise RuntimeError(f"probing torch {release} failed:\n{proc.stderr[-3000:]}")
    data = json.loads(out.read_text(encoding="utf-8"))
    data["cost"] = {**cost, "probe_seconds": round(time.monotonic() - started, 1)}
    write(data, out)
    log(f"torch {release}: {summary(data)}")
    return data


def summary(data: dict) -> str:
    counts: dict[str, int] = {}
    for page in data["pages"].values():
        for ex in page["examples"]:
            counts[ex["status"]] = counts.get(ex["status"], 0) + 1
    present = sum(1 for a in data["apis"].values() if a["present"])
    c = data.get("cost", {})
    return (
        f"{present}/{len(data['apis'])} APIs present; examples "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + f"; install {c.get('install_seconds', '-')} s, probe {c.get('probe_seconds', '-')} s"
    )


# ---------------------------------------------------------------------------------------------------- merge


def load_shards(paths) -> list[dict]:
    shards = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    return sorted(shards, key=lambda s: envs.key(s["release"]))


@cache
def _minors() -> tuple[str, ...]:
    return tuple(envs.minor(r) for r in RELEASES)


def _since(releases: list[str], first: int, known: set[str]) -> str:
    """The release a thing was first found in, as browser-compat-data writes it: "2.4" when the release probed
    just before it lacked it and is the minor right before; "≤2.4" when nothing earlier tells."""
    release = releases[first]
    earlier = [r for r in releases[:first] if r in known]
    if not earlier:
        return f"≤{envs.minor(release)}"
    m = _minors()
    here, before = envs.minor(release), envs.minor(earlier[-1])
    adjacent = here in m and before in m and m.index(here) - m.index(before) == 1
    return here if adjacent else f"≤{here}"


def _top_module_missing(found: dict) -> bool:
    """Absent only because a module could not be imported in that env: the data cannot tell."""
    return not found["present"] and (found.get("importable") is False or "cannot be imported" in found.get("why", ""))


_THIRD_PARTY = re.compile(r"^ModuleNotFoundError: No module named '(?!torch|torchvision)")


def _env_lacked(shard: dict, api: str) -> bool:
    """The release's environment lacked a third-party module the API's page imports: its absence there says
    nothing about torch (shards made before probes told import failures apart)."""
    return any(
        _THIRD_PARTY.match(e.get("error", ""))
        for p in shard["pages"].values()
        if p["api"] == api
        for e in p["examples"]
    )


def api_history(name: str, shards: list[dict], warnings_by_release: dict[str, list[dict]]) -> dict:
    releases = [s["release"] for s in shards]
    status = {}
    for s in shards:
        found = s["apis"].get(name)
        unknown = found is None or _top_module_missing(found) or (not found["present"] and _env_lacked(s, name))
        status[s["release"]] = "unknown" if unknown else ("present" if found["present"] else "absent")
    known = {r for r, v in status.items() if v != "unknown"}
    present = [i for i, r in enumerate(releases) if status[r] == "present"]
    out: dict = {"status": status}
    if not present:
        return {**out, "added": None}
    out["added"] = _since(releases, present[0], known)
    last = present[-1]
    later_absent = [r for r in releases[last + 1 :] if status[r] == "absent"]
    if later_absent:
        out["removed"] = _since(releases, releases.index(later_absent[0]), known)
    out["parameters"] = _parameter_history(name, shards, releases, status)
    deprecated = _deprecation(releases, status, warnings_by_release)
    if deprecated:
        out["deprecated"] = deprecated
    return out


def _parameter_history(name, shards, releases, status) -> dict:
    readable = {}  # release -> (names in order, {name: default}, defaults known)
    for s in shards:
        found = s["apis"].get(name) or {}
        generic = [p for p, _ in found.get("parameters", [])] == ["args", "kwargs"]  # (*args, **kwargs): unread
        if found.get("present") and "parameters" in found and not generic:
            readable[s["release"]] = ([p for p, _ in found["parameters"]], dict(found["parameters"]), found["defaults"])
    order = [r for r in releases if r in readable]
    names: list[str] = []
    for r in order:
        names += [n for n in readable[r][0] if n not in names]
    out = {}
    known = {r for r, v in status.items() if v != "unknown"}
    for pname in names:
        seen = [i for i, r in enumerate(releases) if r in readable and pname in readable[r][1]]
        first = seen[0]
        # known for a parameter: releases where the API's parameters could be read
        added = _since(
            releases, first, {r for r in known if r in readable} | {r for r in known if status[r] == "absent"}
        )
        entry: dict = {"added": added}
        after = [r for r in releases[seen[-1] + 1 :] if r in readable]
        if after:
            entry["removed"] = _since(releases, releases.index(after[0]), set(readable))
        values = [(r, readable[r][1][pname]) for r in order if pname in readable[r][1] and readable[r][2]]
        with_defaults = {r for r, _ in values}
        changes = []
        for r, value in values:
            if not changes or changes[-1]["value"] != value:
                since = _since(releases, releases.index(r), with_defaults) if changes else added
                changes.append({"since": since, "value": value})
        if len(changes) > 1:
            entry["defaults"] = changes
        elif changes:
            entry["default"] = changes[0]["value"]
        out[pname] = entry
    return out


def _deprecation(releases, status, warnings_by_release) -> dict | None:
    warned = [r for r in releases if status[r] == "present" and warnings_by_release.get(r)]
    if not warned:
        return None
    present = [r for r in releases if status[r] == "present"]
    run = []  # the releases of the last run of warning releases
    for r in present:
        run = [*run, r] if r in warned else []
    first = run[0] if run else warned[0]
    w = warnings_by_release[run[-1] if run else warned[-1]][0]
    out = {"since": _since(releases, releases.index(first), set(present)), **w}
    if not run:  # it warned once and no longer does
        later = [r for r in present if envs.key(r) > envs.key(warned[-1])]
        out["until"] = envs.minor(later[0])
    return out


REPLACEMENT = re.compile(r"\b(use|instead|replace[ds]?|migrate|in favou?r of|renamed to|switch to)\b", re.I)
URL = re.compile(r"https?://\S+")


def warning_subject(message: str) -> str:
    """What a warning is about: its text before any "use …" / "instead" clause, links left out."""
    text = URL.sub("", message)
    cut = REPLACEMENT.search(text)
    return text[: cut.start()] if cut else text


_EMITTERS = ("__init__", "__new__", "__call__", "__getattr__")  # a class's or module's own entry points


def _emitted_by(warning: dict, api: str) -> bool:
    """The warning came from this API's own function (the frame the example called, recorded by the runner), or
    its origin is unknown (an older shard) or outside torch (a deprecation decorator's wrapper)."""
    origin = warning.get("origin") or ""
    if not origin or not origin.startswith(("torch/", "torchvision/")):
        return True
    return origin.rsplit(":", 1)[-1] in (api.rsplit(".", 1)[-1], *_EMITTERS)


def _relevant(warning: dict, api: str, params: set[str]) -> bool:
    """Is a warning about this API? It must name the API (its dotted name, or its last part standing alone) or
    one of its parameters before any "use …" / "instead" clause, so that "X is deprecated, use <this API>
    instead" on this API's page is not taken for its own deprecation, nor a warning its module's import emits
    about something else ("distutils Version classes are deprecated")."""
    if not _emitted_by(warning, api):
        return False  # torch.load's warning names add_safe_globals: it is still torch.load's
    subject = warning_subject(warning["message"])
    forms = {api, api.removeprefix("torch."), api.rsplit(".", 1)[-1]}  # never the tail of a longer dotted name
    names = [rf"(?<![\w.]){re.escape(form)}\b" for form in forms]
    names += [rf"['`\"]{re.escape(p)}['`\"]" for p in params]
    return any(re.search(n, subject) for n in names)


# The last line of an error an example raises only because it uses an API this release does not have yet.
_MISSING_API = re.compile(
    r"^(AttributeError: .*has no attribute"
    r"|ImportError: cannot import name"
    r"|ModuleNotFoundError: No module named '(torch|torchvision)"
    r"|TypeError: .*(unexpected keyword|takes \d+ positional|missing \d+ required"
    r"|received an invalid combination of arguments)"
    r"|.*didn't match because some of the arguments have invalid types)"  # the last line of that TypeError
)
_FOLLOW_ON = re.compile(r"^(NameError|UnboundLocalError): ")  # a name an earlier, failed block should have made


def outcome(ex: dict, earlier: list[str], shard: dict) -> str:
    """same | ran | differs | skipped | missing-api | unavailable | error: what one release did with an example."""
    if ex["status"] != "failed":
        return ex["status"]
    error = ex.get("error", "")
    if "No module named 'torchvision'" in error and shard["environment"]["torchvision"] == "not installed":
        return "unavailable"
    if _MISSING_API.match(error):
        return "missing-api"
    if _FOLLOW_ON.match(error) and earlier:
        return earlier[-1]  # the page stopped making sense at that earlier block
    return "error"


def _outcomes(shard: dict, page: str) -> list[str]:
    found: list[str] = []
    failures: list[str] = []
    for ex in shard["pages"].get(page, {}).get("examples", []):
        result = outcome(ex, failures, shard)
        if result in ("missing-api", "unavailable", "error"):
            failures.append(result)
        found.append(result)
    return found


def example_history(page: str, shards: list[dict]) -> list[dict]:
    newest = next(s for s in reversed(shards) if page in s["pages"])
    reference = newest["pages"][page]["examples"]
    releases = [s["release"] for s in shards]
    judged = {s["release"]: _outcomes(s, page) for s in shards}
    out = []
    for i, ref in enumerate(reference):
        results, outputs, texts, errors = {}, {}, {}, {}
        for s in shards:
            examples = s["pages"].get(page, {}).get("examples", [])
            ex = examples[i] if i < len(examples) else None
            if ex is None or ex["code"] != ref["code"] or ex["expected"] != ref["expected"]:
                continue  # this release ran other code (the page changed between probes)
            r = s["release"]
            results[r] = judged[r][i]
            if ex["status"] == "differs":
                outputs[r] = ex["output"]
                texts[ex["output"]] = ex["actual"]
            if "error" in ex:
                errors[r] = ex["error"]
        entry: dict = {"code": ref["code"], "expected": ref["expected"], "results": results}
        entry["same"] = ranges(releases, {r for r, v in results.items() if v in ("same", "ran")})
        differs = [r for r in releases if results.get(r) == "differs"]
        if differs:
            entry["first_differs"] = differs[0]
            entry["outputs"] = outputs
            entry["texts"] = texts
        if errors:
            entry["errors"] = errors
        out.append(entry)
    return out


def ranges(releases: list[str], chosen: set[str]) -> list[list[str]]:
    ranges: list[list[str]] = []
    for i, r in enumerate(releases):
        if r not in chosen:
            continue
        if ranges and releases.index(ranges[-1][1]) == i - 1:
            ranges[-1][1] = r
        else:
            ranges.append([r, r])
    return ranges


def merge(shards: list[dict]) -> dict:
    """The version data from any set of shards; the same shards give the same data in any order."""
    shards = sorted(shards, key=lambda s: envs.key(s["release"]))
    releases = [s["release"] for s in shards]
    if len(set(releases)) != len(releases):
        raise ValueError(f"two shards for one release: {releases}")
    page_api = {}
    for s in shards:
        for rel, p in s["pages"].items():
            page_api[rel] = p["api"]
    apis = sorted({a for s in shards for a in s["apis"]} | set(page_api.values()))
    out_apis = {}
    for name in apis:
        params = {p for s in shards for p, _ in (s["apis"].get(name) or {}).get("parameters", [])}
        warned: dict[str, list[dict]] = {}
        for s in shards:
            found = list((s["apis"].get(name) or {}).get("warnings", []))
            for p in s["pages"].values():
                if p["api"] == name:
                    found += [w for ex in p["examples"] for w in ex.get("warnings", [])]
            found = [
                {"category": w["category"], "message": w["message"]} for w in found if _relevant(w, name, params)
            ]  # fmt: skip
            if found:
                warned[s["release"]] = [w for i, w in enumerate(found) if w not in found[:i]]
        out_apis[name] = api_history(name, shards, warned)
    pages = {rel: {"api": api, "examples": example_history(rel, shards)} for rel, api in sorted(page_api.items())}
    return {
        "releases": [
            {
                "release": s["release"],
                "torchvision": s["environment"]["torchvision"],
                "numpy": s["environment"].get("numpy"),
                "python": s["environment"]["python"],
            }
            for s in shards
        ],
        "apis": out_apis,
        "pages": pages,
    }


def fix_front_matter(page, data: dict) -> str | None:
    """The page's text with a disagreeing `since:` line removed and the version tags set from the data; None
    when nothing changes. Only those two front-matter lines are touched."""
    found = data["apis"].get((page.front or {}).get("api") or "")
    if page.kind != "api" or not found or not found.get("added"):
        return None
    lines = page.text.split("\n")
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    changed = False
    since = page.front.get("since")
    if since is not None and str(since) != found["added"]:
        lines = [line for i, line in enumerate(lines) if not (0 < i < end and line.startswith("since:"))]
        end -= 1
        changed = True
    tags = list(page.front.get("tags") or [])
    wanted = expected_tags(tags, found, data, page.front["api"])
    if wanted != tags:
        i = next(i for i in range(1, end) if lines[i].startswith("tags:"))
        lines[i] = f"tags: [{', '.join(wanted)}]"
        changed = True
    return "\n".join(lines) if changed else None


def validate(data: dict) -> None:
    import jsonschema

    jsonschema.validate(data, json.loads(SCHEMA.read_text(encoding="utf-8")))


def merge_files(paths, out: Path = HISTORY) -> dict:
    data = merge(load_shards(paths))
    validate(data)
    write(data, out)
    return data


# ---------------------------------------------------------------------------------------------------- cost


def cost_table(shards: list[dict]) -> str:
    rows = ["| torch | torchvision | install s | download MB | disk GB | probe s |", "|---|---|---|---|---|---|"]
    total = {"install_seconds": 0.0, "download_bytes": 0, "disk_bytes": 0, "probe_seconds": 0.0}
    for s in shards:
        c = s.get("cost", {})
        for k in total:
            total[k] += c.get(k, 0) or 0
        rows.append(
            f"| {s['release']} | {s['environment']['torchvision']} | {c.get('install_seconds', '-')} | "
            f"{c.get('download_bytes', 0) / 1e6:.0f} | {c.get('disk_bytes', 0) / 1e9:.1f} | {c.get('probe_seconds', '-')} |"
        )
    rows.append(
        f"| total ({len(shards)}) | | {total['install_seconds']:.0f} | {total['download_bytes'] / 1e6:.0f} | "
        f"{total['disk_bytes'] / 1e9:.1f} (one at a time) | {total['probe_seconds']:.0f} |"
    )
    return "\n".join(rows)


def main(args) -> int:
    if args.action == "shard":
        from handbook.releases.probe import shard

        reuse = json.loads(Path(args.reuse).read_text(encoding="utf-8")) if args.reuse else None
        paths = [Path(p).resolve() for p in args.paths] if args.paths else None
        write(shard(paths, jobs=args.jobs, reuse=reuse), Path(args.out))
        return 0
    if args.action == "probe":
        releases = args.releases or probe_order(RELEASES)
        failed = []
        for n, release in enumerate(releases, 1):
            if shard_path(release).exists() and not args.force and not args.again:
                print(f"torch {release}: shard exists (versions probe --again {release} re-runs changed pages)")
                continue
            print(f"[{n}/{len(releases)}] torch {release}: installing and probing", flush=True)
            try:
                probe_release(release, force=args.force, keep_env=args.keep_env)
            except RuntimeError as exc:  # one broken release must not cost the others their probe
                print(f"error: {exc}", file=sys.stderr, flush=True)
                failed.append(release)
        if failed:
            print(f"error: {len(failed)} release(s) not probed: {', '.join(failed)}", file=sys.stderr)
        if args.no_merge or failed:
            return 1 if failed else 0
        args.action, args.shards = "merge", []
    if args.action == "merge":
        paths = args.shards or sorted(SHARDS.glob("torch-*.json"))
        data = merge_files(paths, Path(args.out) if getattr(args, "out", None) else HISTORY)
        print(f"merged {len(paths)} shard(s): {', '.join(r['release'] for r in data['releases'])} -> {HISTORY.name}")
        return 0
    if args.action == "fix-front-matter":
        from handbook.verify.document import collect, parse_page

        data = load()
        if data is None:
            print("error: no versions/history.json yet (run versions probe)", file=sys.stderr)
            return 2
        for path in collect(args.paths or None):
            page = parse_page(path)
            text = fix_front_matter(page, data)
            if text is not None:
                path.write_text(text, encoding="utf-8")
                print(f"fixed {page.rel}")
        return 0
    if args.action == "cost":
        print(cost_table(load_shards(sorted(SHARDS.glob("torch-*.json")))))
        return 0
    return 2


def add_parser(sub) -> None:
    v = sub.add_parser("versions", help="version history of every API, measured across torch releases")
    actions = v.add_subparsers(dest="action", required=True)
    p = actions.add_parser("probe", help="probe releases (default: every minor's last patch), then merge")
    p.add_argument("releases", nargs="*")
    p.add_argument("--again", action="store_true", help="re-probe releases that have a shard (changed pages only)")
    p.add_argument("--force", action="store_true", help="re-probe every page, even of releases that have a shard")
    p.add_argument("--no-merge", action="store_true", help="only write the shards")
    p.add_argument("--keep-env", action="store_true", help="keep the release's environment after its probe")
    s = actions.add_parser("shard", help="probe the torch of this interpreter into one shard file")
    s.add_argument("paths", nargs="*", help="pages (default: every api page)")
    s.add_argument("--out", required=True)
    s.add_argument("--reuse", help="an earlier shard of this release: its pages whose examples did not change are kept")
    s.add_argument("--jobs", type=int, default=None)
    m = actions.add_parser("merge", help="merge shards into versions/history.json")
    m.add_argument("shards", nargs="*")
    m.add_argument("--out")
    actions.add_parser("cost", help="download, time and disk per probed release")
    f = actions.add_parser("fix-front-matter", help="remove since: lines and set version tags where the data disagrees")
    f.add_argument("paths", nargs="*")
