"""Changes between two torch releases, as the handbook sees them: data, Markdown, and the generated page.

- `surface`: run with one environment's python, it writes the API surface that environment's torch shows: the
  parameters of every API a page documents (front matter `api:`), and the public names of the modules (and
  classes) those APIs live in.
- `compare(old, new)`: two run folders (results.json, lint.txt, surface.json each, see upgrade.py) into a report
  (changes.schema.json): changed example outputs, warnings, error texts, added/removed APIs and parameters, new
  public APIs (candidates for pages), new lint findings.
- `markdown(report)`: the summary for review; `page(report)`: the site's "What changed in torch X" page, generated
  at build from the committed report (changes/torch-X.json); `note(report, rel)`: the note on each page it names.
"""

from __future__ import annotations

import difflib
import html
import json
import re
import sys
import warnings
from functools import lru_cache
from pathlib import Path

from handbook import DOCS, ROOT
from handbook.verify.document import parse_page
from handbook.verify.fences import fence_for

SCHEMA = Path(__file__).with_name("changes.schema.json")
COMMITTED = ROOT / "changes"  # committed reports: changes/torch-X.Y.Z.json feed the generated page
KINDS = {
    "behaviour": "Behaviour",
    "error-text": "Error texts and classes",
    "warning": "Warnings",
    "parameter": "New and removed parameters",
    "api": "New and removed APIs",
    "new-api": "New public APIs (candidates for new pages)",
    "lint": "New lint findings",
}
_EXC_LINE = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt)\b(?::|$)")
_WARN = re.compile(r"Warning\b")


# -- the surface: run inside the environment being described -------------------------------------------------


def documented_apis(docs: Path = DOCS) -> dict[str, str]:
    """api name -> page (docs-relative path) for every api page."""
    found = {}
    for path in sorted(docs.rglob("*.md")):
        page = parse_page(path)
        api = (page.front or {}).get("api") if isinstance(page.front, dict) else None
        if api:
            found[str(api)] = path.relative_to(docs).as_posix()
    return found


def covered_names(docs: Path = DOCS) -> set[str]:
    """Every API a page names in its front matter: api pages' `api:` and any page's `related:`."""
    names = set()
    for path in sorted(docs.rglob("*.md")):
        front = parse_page(path).front
        if isinstance(front, dict):
            names.update(str(n) for n in [front.get("api"), *(front.get("related") or [])] if n)
    return names


def _what(obj) -> str:
    import inspect

    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    return "callable" if callable(obj) else "value"


def _ours(value) -> bool:
    """Defined in torch or torchvision (modules by name, classes and functions by their __module__)."""
    import inspect

    where = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
    if not isinstance(where, str) or not (
        inspect.ismodule(value) or inspect.isclass(value) or inspect.isroutine(value)
    ):
        return True
    return where.split(".")[0] in ("torch", "torchvision")


def surface(docs: Path = DOCS) -> dict:
    """What this environment's torch shows of the APIs the handbook covers: the parameters of each documented
    API, and the public names (with what each is: module, class, callable, value) of the modules and classes that
    hold a documented or related API, and of each documented class."""
    import importlib.metadata as metadata

    from handbook.lint.signatures import parameters_of, resolve

    warnings.simplefilter("ignore")  # deprecated aliases warn when read (torch.distributed.reduce_op)
    apis, owners = {}, set()
    for name in documented_apis(docs):
        try:
            obj = resolve(name)
        except LookupError:
            apis[name] = None  # does not exist in this release
            continue
        try:
            params = parameters_of(name)
        except Exception:  # noqa: BLE001 - a signature that cannot be read is "unknown", not a crash
            params = None
        apis[name] = {"parameters": params}
        if _what(obj) == "class":
            owners.add(name)
    for name in covered_names(docs):
        if "." in name:
            owners.add(name.rsplit(".", 1)[0])
    modules = {}
    for owner in sorted(owners):
        try:
            obj = resolve(owner)
        except LookupError:
            continue
        if _what(obj) not in ("module", "class"):
            continue
        members = {}
        for n in dir(obj):
            if n.startswith("_"):
                continue
            try:
                value = getattr(obj, n)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails to load is still a name
                members[n] = "value"
                continue
            if not _ours(value):
                continue  # a helper the module imported (enum.Enum, functools.cache): not its API
            members[n] = _what(value)
        modules[owner] = members
    return {
        "torch": metadata.version("torch"),
        "torchvision": metadata.version("torchvision"),
        "apis": apis,
        "modules": modules,
    }


# -- comparing two runs ----------------------------------------------------------------------------------------


def _load(folder: Path) -> tuple[dict, list[str], dict]:
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    lint = (folder / "lint.txt").read_text(encoding="utf-8").splitlines() if (folder / "lint.txt").exists() else []
    surf = json.loads((folder / "surface.json").read_text(encoding="utf-8"))
    return results, lint, surf


_MISMATCH = ("output differs", "prints output but has no output block")


def _shown(row: dict) -> str:
    """What an example showed: its output, then, when it failed with an error, the error's last line (the
    exception as a reader sees it) or, for a warning, the warning."""
    text = (row.get("actual") or "").rstrip("\n")
    reason, detail = row.get("reason") or "", (row.get("detail") or "").rstrip("\n")
    if row["status"] != "failed" or reason in _MISMATCH or is_sample(reason):
        return text
    if "warning" in reason:
        extra = detail or reason
    else:
        lines = [line for line in detail.split("\n") if line.strip()] or [reason]
        extra = lines[-1]
    return (text + "\n" if text else "") + extra


def is_sample(reason: str) -> bool:
    """A nondeterministic example's outcome: its output is a sample, never compared."""
    return reason == "nondeterministic" or reason.startswith(("sample output was", "has no sample output"))


def classify(old: str, new: str) -> str:
    """behaviour, error-text or warning: what the changed lines of an example's output are about."""
    changed = [
        line[1:].strip()
        for line in difflib.ndiff(old.splitlines(), new.splitlines())
        if line[:1] in "+-" and line[1:].strip()
    ]
    if any(_WARN.search(line) or "warning" in line.lower() for line in changed):
        return "warning"
    if changed and all(
        _EXC_LINE.match(line) or line.startswith(("expected ", "File ", "Traceback")) for line in changed
    ):
        return "error-text"
    return "behaviour"


def _page_of(name: str) -> tuple[str, int]:
    path, _, line = name.rpartition(":")
    rel = path[len("docs/") :] if path.startswith("docs/") else path
    return rel, int(line)


def _lint_key(finding: str) -> str:
    """A lint finding without its line number (pages move), so the same finding matches across runs."""
    return re.sub(r"^([^:]+):\d+:", r"\1:", finding.strip())


def compare(old_dir: Path, new_dir: Path) -> dict:
    old_results, old_lint, old_surface = _load(Path(old_dir))
    new_results, new_lint, new_surface = _load(Path(new_dir))
    entries: list[dict] = []
    old_rows = {(r["name"], r["device"]): r for r in old_results["examples"]}
    for row in new_results["examples"]:
        before = old_rows.get((row["name"], row["device"]))
        if before is None or before["code"] != row["code"]:
            continue  # not the same example in both runs
        if row["status"] == "skipped" and before["status"] == "skipped":
            continue
        if is_sample(row["reason"]) or is_sample(before["reason"]):
            continue  # a nondeterministic example's output is a sample of one run: never compared
        old_text, new_text = _shown(before), _shown(row)
        if before["status"] == row["status"] and old_text == new_text:
            continue
        page, line = _page_of(row["name"])
        entries.append(
            {
                "kind": classify(old_text, new_text),
                "page": page,
                "line": line,
                "example": row["name"],
                "code": row["code"],
                "device": row["device"],
                "old_status": before["status"],
                "new_status": row["status"],
                "reason": row["reason"] if row["status"] == "failed" else before["reason"],
                "old_output": old_text,
                "new_output": new_text,
            }
        )
    pages = documented_apis()
    for name in sorted(set(old_surface["apis"]) | set(new_surface["apis"])):
        before, after = old_surface["apis"].get(name), new_surface["apis"].get(name)
        page = pages.get(name)
        if (before is None) != (after is None):
            entries.append({"kind": "api", "api": name, "page": page, "change": "added" if after else "removed"})
            continue
        if before is None or before["parameters"] is None or after["parameters"] is None:
            continue
        old_p, new_p = before["parameters"], after["parameters"]
        for p in new_p:
            if p not in old_p:
                entries.append({"kind": "parameter", "api": name, "page": page, "parameter": p, "change": "added"})
        for p in old_p:
            if p not in new_p:
                entries.append({"kind": "parameter", "api": name, "page": page, "parameter": p, "change": "removed"})
    for owner in sorted(set(old_surface["modules"]) & set(new_surface["modules"])):
        before, after = _members(old_surface["modules"][owner]), _members(new_surface["modules"][owner])
        for n in sorted(set(after) - set(before)):
            entries.append({"kind": "new-api", "api": f"{owner}.{n}", "page": pages.get(owner), "change": "added"})
        for n in sorted(set(before) - set(after)):
            api = f"{owner}.{n}"
            if api not in old_surface["apis"]:  # a documented one is already reported as a removed API
                entries.append(
                    {"kind": "new-api", "api": api, "page": pages.get(api, pages.get(owner)), "change": "removed"}
                )
        for n in sorted(set(before) & set(after)):
            if before[n] and after[n] and before[n] != after[n]:
                entries.append(
                    {
                        "kind": "new-api",
                        "api": f"{owner}.{n}",
                        "page": pages.get(f"{owner}.{n}", pages.get(owner)),
                        "change": f"{before[n]} → {after[n]}",
                    }
                )
    known = {_lint_key(f) for f in old_lint}
    for finding in new_lint:
        if finding.strip() and _lint_key(finding) not in known:
            rel, _, rest = finding.partition(":")
            line = rest.split(":", 1)[0]
            entries.append(
                {
                    "kind": "lint",
                    "page": rel[len("docs/") :] if rel.startswith("docs/") else rel,
                    "line": int(line) if line.isdigit() else 0,
                    "finding": finding.strip(),
                }
            )
    counts = {kind: sum(1 for e in entries if e["kind"] == kind) for kind in KINDS}
    return {
        "schema": 1,
        "old": {"torch": old_surface["torch"], "torchvision": old_surface["torchvision"]},
        "new": {"torch": new_surface["torch"], "torchvision": new_surface["torchvision"]},
        "examples": {
            "old": _counts(old_results["examples"]),
            "new": _counts(new_results["examples"]),
        },
        "counts": counts,
        "entries": entries,
    }


def _members(names) -> dict[str, str | None]:
    """A surface's public names of one module: {name: what} (a plain list, from older surfaces, has no kinds)."""
    return dict(names) if isinstance(names, dict) else dict.fromkeys(names)


def _counts(rows: list[dict]) -> dict[str, int]:
    return {s: sum(1 for r in rows if r["status"] == s) for s in ("passed", "failed", "skipped")}


@lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def validate(report: dict) -> None:
    """Raise jsonschema.ValidationError when the report does not follow changes.schema.json."""
    import jsonschema

    jsonschema.validate(report, _schema())


# -- Markdown ----------------------------------------------------------------------------------------------------


def version(report: dict, side: str) -> str:
    return report[side]["torch"].split("+")[0]


def _fence(text: str, indent: str = "") -> list[str]:
    body = text if text.strip() else "(no output)"
    fence = fence_for(body)
    return [f"{indent}{fence}text", *[indent + line for line in body.split("\n")], f"{indent}{fence}"]


def _describe(entry: dict, link, statuses: bool = True) -> list[str]:
    kind = entry["kind"]
    where = link(entry)
    if kind in ("behaviour", "error-text", "warning"):
        status = (
            f" ({entry['old_status']} → {entry['new_status']})"
            if statuses and entry["old_status"] != entry["new_status"]
            else ""
        )
        return [
            f"- {where}{status}",
            "",
            f"    Before (torch {entry['_old']}):",
            "",
            *_fence(entry["old_output"], "    "),
            "",
            f"    Since torch {entry['_new']}:",
            "",
            *_fence(entry["new_output"], "    "),
            "",
        ]
    if kind == "parameter":
        verb = "new parameter" if entry["change"] == "added" else "parameter removed"
        return [f"- `{entry['api']}`: {verb} `{entry['parameter']}` — {where}"]
    if kind in ("api", "new-api"):
        verb = (
            entry["change"]
            if entry["change"] in ("added", "removed")
            else f"is now a {entry['change'].split(' → ')[1]} (before, a {entry['change'].split(' → ')[0]})"
        )
        return [f"- `{entry['api']}` {verb}" + (f" — {where}" if entry.get("page") else "")]
    return [f"- `{entry['finding']}` — {where}"]


def _sections(report: dict, link, statuses: bool = True) -> list[str]:
    lines: list[str] = []
    old, new = version(report, "old"), version(report, "new")
    for kind, heading in KINDS.items():
        group = [dict(e, _old=old, _new=new) for e in report["entries"] if e["kind"] == kind]
        if not group:
            continue
        lines += [f"## {heading}", ""]
        for entry in group:
            lines += _describe(entry, link, statuses)
        lines.append("")
    return lines


def markdown(report: dict) -> str:
    """The review summary written next to changes.json (links are paths in this checkout)."""
    old, new = version(report, "old"), version(report, "new")

    def link(e: dict) -> str:
        if e.get("line"):
            return f"`docs/{e['page']}:{e['line']}`"
        return f"`docs/{e['page']}`" if e.get("page") else ""

    counts = ", ".join(f"{n} {k}" for k, n in report["counts"].items() if n) or "no change"
    ex_old, ex_new = report["examples"]["old"], report["examples"]["new"]
    lines = [
        f"# Changes: torch {old} → torch {new}",
        "",
        f"{sum(report['counts'].values())} change(s): {counts}.",
        "",
        f"Examples with torch {old}: {ex_old['passed']} passed, {ex_old['failed']} failed, {ex_old['skipped']} skipped; "
        f"with torch {new}: {ex_new['passed']} passed, {ex_new['failed']} failed, {ex_new['skipped']} skipped.",
        "",
        *_sections(report, link),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


# -- the generated site page -------------------------------------------------------------------------------------


def committed(root: Path = COMMITTED) -> list[dict]:
    """Committed reports, newest release first."""
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.glob("torch-*.json"))]
    return sorted(reports, key=lambda r: [int(x) for x in re.findall(r"\d+", version(r, "new"))], reverse=True)


def page_path(report: dict) -> str:
    return f"changes/torch-{version(report, 'new')}.md"


def _current_lines(rel: str, docs: Path) -> dict[str, int]:
    """code hash -> line of that example in the page as it is now (reports name examples by line when written)."""
    path = docs / rel
    if not path.exists():
        return {}
    return {ex.code_hash: ex.line for ex in parse_page(path).examples}


def resolved(report: dict, docs: Path = DOCS) -> list[dict]:
    """The report's entries, each output entry's line moved to where its example (same code) stands now;
    `line` is None where the page no longer holds that example."""
    cache: dict[str, dict[str, int]] = {}
    out = []
    for e in report["entries"]:
        if e.get("code") and e.get("page"):
            lines = cache.setdefault(e["page"], _current_lines(e["page"], docs))
            e = {**e, "line": lines.get(e["code"])}
        out.append(e)
    return out


# The groups of the site page, in reading order: what a reader of the new release meets first.
READER_GROUPS = (
    ("New APIs and parameters", ("new-api", "api", "parameter")),
    ("Behaviour changes", ("behaviour",)),
    ("New warnings and deprecations", ("warning",)),
    ("Error messages", ("error-text",)),
)
_VERSIONS = re.compile(r"\d+\.\d+(?:\.\d+)?(?:\+\w+)?|\bcu\d+\b")
_CARETS = re.compile(r"^\s*[~^]+\s*$", re.M)


def noise(entry: dict) -> bool:
    """Outputs that differ only in version strings (torch 2.14.1+cu130 → 2.15.0+cu132) or traceback markers
    (^^^^) say nothing about torch's behaviour."""
    if "old_output" not in entry:
        return False
    old, new = (
        [line.rstrip() for line in _CARETS.sub("", _VERSIONS.sub("V", entry[k])).split("\n") if line.strip()]
        for k in ("old_output", "new_output")
    )
    return old == new


def _words_diff(old: str, new: str) -> str:
    """The first differing line of two outputs, word by word: removed words struck through, added ones bold."""
    old_lines, new_lines = old.strip().split("\n"), new.strip().split("\n")
    pair = next(((a, b) for a, b in zip(old_lines, new_lines, strict=False) if a != b), None)
    if pair is None:
        pair = (
            old_lines[-1] if len(old_lines) > len(new_lines) else "",
            new_lines[-1] if len(new_lines) > len(old_lines) else "",
        )
    a, b = pair[0].split(" "), pair[1].split(" ")
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if op == "equal":
            out.append(html.escape(" ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(f"<del>{html.escape(' '.join(a[i1:i2]))}</del>")
        if j2 > j1:
            out.append(f"<ins>{html.escape(' '.join(b[j1:j2]))}</ins>")
    return f'<code class="hb-diff">{" ".join(out)}</code>'


def _line(entry: dict, link) -> str:
    """One change in plain words, linked to its page and example."""
    where = link(entry)
    kind = entry["kind"]
    if kind in ("api", "new-api"):
        what = {"added": "is new", "removed": "was removed"}.get(entry["change"])
        if what is None:
            before, after = entry["change"].split(" → ")
            what = f"is now a {after} (before, a {before})"
        return f"- `{entry['api']}` {what}" + (f" — {where}" if entry.get("page") else "")
    if kind == "parameter":
        verb = "has a new parameter" if entry["change"] == "added" else "lost its parameter"
        return f"- `{entry['api']}` {verb} `{entry['parameter']}` — {where}"
    if kind == "warning" and not entry["old_output"].lstrip().startswith(
        ("DeprecationWarning", "FutureWarning", "UserWarning")
    ):
        return f"- {where}: now warns — `{_clip(entry['new_output'])}`"
    if kind == "error-text":
        return f"- {where}: the error message changed: {_words_diff(entry['old_output'], entry['new_output'])}"
    return f"- {where}: the output changed: {_words_diff(entry['old_output'], entry['new_output'])}"


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def page(report: dict, docs: Path = DOCS) -> str:
    """The 'What changed in torch X' page: one line per change in plain words, grouped for a reader, each linked
    to its page and example, the changed words marked; outputs that differ only in version strings are left out
    (and counted)."""
    old, new = version(report, "old"), version(report, "new")
    entries = [e for e in resolved(report, docs) if e["kind"] != "lint"]
    shown = [e for e in entries if not noise(e)]
    titles: dict[str, str] = {}

    def link(e: dict) -> str:
        if not e.get("page"):
            return ""
        if not (docs / e["page"]).exists():  # a docs folder without that page (a fixture site): no broken link
            return e["page"]
        if e["page"] not in titles:
            h1 = next((h.text for h in parse_page(docs / e["page"]).headings if h.level == 1), e["page"])
            titles[e["page"]] = h1.strip("`")
        name = titles[e["page"]]
        target = f"../{e['page']}" + (f"#example-{e['line']}" if e.get("line") else "")
        return f"[{name}]({target})" + (f" ([example]({target}))" if e.get("line") else "")

    lines = [
        f"# What changed in torch {new}",
        "",
        f"Every example of the handbook was run with torch {old} and with torch {new}, and the signatures of the APIs"
        f" it documents read in both (`python -m handbook upgrade`; the report is `changes/torch-{new}.json`). "
        f"{len(shown)} changes, one line each, grouped; removed words are struck through, added ones in bold.",
    ]
    if len(entries) > len(shown):
        lines += [
            "",
            f"{len(entries) - len(shown)} outputs that differ only in version strings or traceback markers are left out.",
        ]
    for heading, kinds in READER_GROUPS:
        group = [e for e in shown if e["kind"] in kinds]
        if group:
            lines += ["", f"## {heading}", "", *(_line(e, link) for e in group)]
    return "\n".join(lines).rstrip("\n") + "\n"


def notes(report: dict, docs: Path = DOCS) -> dict[str, list[dict]]:
    """docs-relative page -> the entries naming it (lines as they stand now)."""
    found: dict[str, list[dict]] = {}
    for e in resolved(report, docs):
        if e.get("page") and e["kind"] != "lint":
            found.setdefault(e["page"], []).append(e)
    return found


def note(report: dict, rel: str, entries: list[dict]) -> str:
    """The admonition shown on a page the report names, linking back to the What-changed page."""
    new = version(report, "new")
    target = "../" * rel.count("/") + page_path(report)
    kinds = [KINDS[k].lower() for k in KINDS if any(e["kind"] == k for e in entries)]
    return (
        f'!!! info "Changed in torch {new}"\n\n'
        f"    [What changed in torch {new}]({target}) lists {len(entries)} change(s) shown on this page: "
        f"{', '.join(kinds)}.\n"
    )


def insert_note(markdown_text: str, note_text: str) -> str:
    """The note right after the page's first level-1 heading (or at the top)."""
    lines = markdown_text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join([*lines[: i + 1], "", note_text, *lines[i + 1 :]])
    return note_text + "\n" + markdown_text


def home_link(markdown_text: str, report: dict) -> str:
    """The home page's link to the newest What-changed page: first item of its "Start here" list (or on top)."""
    item = (
        f"- What changed in the pinned release: [What changed in torch {version(report, 'new')}]({page_path(report)})"
    )
    marker = "## Start here\n\n"
    if marker in markdown_text:
        return markdown_text.replace(marker, marker + item + "\n", 1)
    return insert_note(markdown_text, item + "\n")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "surface":
        Path(argv[1]).write_text(json.dumps(surface(), indent=1) + "\n", encoding="utf-8")
        return 0
    print("usage: python -m handbook.releases.changes surface OUT.json", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
