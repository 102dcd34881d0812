"""The "Version history" section of an api page and the generated Deprecations page, from versions/history.json.

Everything shown comes from the probe (`python -m handbook versions probe`): which releases had the API, each
parameter's history, the deprecation warning, and which releases print what the page's examples show.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from handbook.releases import versions
from handbook.verify.document import Page

STATE = {"present": "✓", "absent": "—", "unknown": "?"}
SHOWN = ("same", "ran")


def _label(release: str) -> str:
    return ".".join(release.split(".")[:2])


def added_text(found: dict, releases: list[str]) -> str:
    added = found.get("added")
    if added is None:
        return "not found in any probed release"
    oldest = releases[0]
    if added.startswith("≤"):
        first = next(r for r in releases if found["status"].get(r) == "present")
        if first == oldest:
            return f"{added} (present in the oldest release probed, {oldest}; earlier releases were not probed)"
        return f"{added} (first found in {first}; the release before it was not probed)"
    first = next(r for r in releases if found["status"].get(r) == "present")
    return f"**{added}** (first found in torch {first})"


def _default(value) -> str:
    return "required" if value is None else f"`{value}`"


def parameter_lines(found: dict) -> list[str]:
    """Only the parameters whose history says something: added after the API, removed, or a changed default."""
    api_added = found.get("added")
    out = []
    for name, p in (found.get("parameters") or {}).items():
        notes = []
        if p["added"] != api_added and not p["added"].startswith("≤"):
            notes.append(f"added in {p['added']}")
        if "removed" in p:
            notes.append(f"removed in {p['removed']}")
        if "defaults" in p:
            steps = " → ".join(f"{_default(d['value'])} ({d['since']})" for d in p["defaults"])
            notes.append(f"default changed: {steps}")
        if notes:
            out.append(f"`{name}`: {'; '.join(notes)}")
    return out


def _matching(page: Page, recorded: list[dict]) -> list[tuple[int, object, dict]]:
    """(index, page example, its data) for every example of the page the probe ran with this same code."""
    found = []
    for i, ex in enumerate(page.examples):
        if i < len(recorded) and recorded[i]["code"] == ex.code_hash:
            found.append((i, ex, recorded[i]))
    return found


def _strip(releases: list[str], found: dict, examples: list[dict]) -> list[str]:
    head = "| torch | " + " | ".join(_label(r) for r in releases) + " |"
    rule = "|---|" + "---|" * len(releases)
    row = "| API present | " + " | ".join(STATE[found["status"].get(r, "unknown")] for r in releases) + " |"
    lines = [head, rule, row]
    if examples:
        cells = []
        for r in releases:
            ran = [e["results"][r] for e in examples if r in e["results"] and e["results"][r] != "skipped"]
            shown = sum(1 for v in ran if v in SHOWN)
            cells.append(f"{shown}/{len(ran)}" if ran else "·")
        lines.append("| examples as shown | " + " | ".join(cells) + " |")
    return lines


def _fence(text: str, title: str, indent: str) -> list[str]:
    fence = "````" if "```" in text else "```"
    body = [f"{indent}{line}" if line else "" for line in (text.rstrip("\n") or "(prints nothing)").split("\n")]
    return [f'{indent}{fence}text title="{title}"', *body, f"{indent}{fence}"]


def example_lines(page: Page, matched, releases: list[str]) -> list[str]:
    if not matched:
        return ["- **Examples**: this page's examples changed since the last probe; run `versions probe --again`."]
    ranges = []
    for r in releases:
        if all(e["results"].get(r) in (*SHOWN, "skipped", None) for _, _, e in matched) and any(
            e["results"].get(r) in SHOWN for _, _, e in matched
        ):
            ranges.append(r)
    all_ok = versions._ranges(releases, set(ranges))
    span = ", ".join(_label(a) if a == b else f"{_label(a)} … {_label(b)}" for a, b in all_ok)
    if span:
        lines = [f"- **Examples**: every example prints what this page shows on torch {span}."]
    else:
        lines = ["- **Examples**: no probed release prints everything this page shows."]
    for outcome, what in (
        ("missing-api", "use an API that torch {} lacks (recorded as such, not as a behaviour change)"),
        ("error", "fail for another reason on torch {}"),
        ("unavailable", "could not run on torch {} (no torchvision for it)"),
    ):
        hit = [e for _, _, e in matched if outcome in e["results"].values()]
        where = sorted({r for e in hit for r, v in e["results"].items() if v == outcome}, key=versions.envs.key)
        if hit:
            lines.append(f"- {len(hit)} of {len(matched)} examples {what.format(', '.join(_label(r) for r in where))}.")
    for _, ex, e in matched:
        differs = [r for r in releases if e["results"].get(r) == "differs"]
        if not differs:
            continue
        where = ", ".join(_label(r) for r in differs)
        lines += ["", f'??? note "Example at line {ex.line}: output differs on torch {where}"', ""]
        lines += _fence(ex.expected("cpu"), "As this page shows", "    ")
        for output_hash in dict.fromkeys(e["outputs"][r] for r in differs):
            on = ", ".join(_label(r) for r in differs if e["outputs"][r] == output_hash)
            lines += [""] + _fence(e["texts"][output_hash], f"On torch {on}", "    ")
    return lines


def section(page: Page, data: dict | None = None) -> list[str]:
    """The page's Version history section, as Markdown lines; [] for pages that are not api pages."""
    api = (page.front or {}).get("api")
    if page.kind != "api" or not api:
        return []
    data = versions.load() if data is None else data
    lines = ["", "## Version history", ""]
    found = (data or {}).get("apis", {}).get(api)
    if found is None:
        return [*lines, "Not probed yet: `python -m handbook versions probe --again` measures it.", ""]
    releases = [r["release"] for r in data["releases"]]
    examples = data["pages"].get(page.rel, {}).get("examples", [])
    matched = _matching(page, examples)
    lines += [
        f"Measured by running this page against each torch release from {releases[0]} to {releases[-1]} "
        f"({len(releases)} releases probed).",
        "",
        *_strip(releases, found, [e for _, _, e in matched]),
        "",
        f"- **Added**: {added_text(found, releases)}",
    ]
    if "removed" in found:
        lines.append(f"- **Removed**: {found['removed']}")
    params = parameter_lines(found)
    if params:
        lines.append("- **Parameters**: " + "; ".join(params))
    deprecated = found.get("deprecated")
    if deprecated:
        until = f", until {deprecated['until']}" if "until" in deprecated else ""
        lines.append(
            f"- **Deprecated** since {deprecated['since']}{until}: {deprecated['category']} "
            f"“{html.escape(deprecated['message'], quote=False)}”"
        )
    lines += example_lines(page, matched, releases)
    return [*lines, ""]


_NAME = re.compile(r"\btorch(?:vision)?(?:\.\w+)+|(?<=`)\w+(?=`)")


def replacements(message: str) -> list[str]:
    """The names a deprecation message recommends instead: those after its "use …" / "instead" clause."""
    cut = versions._REPLACEMENT.search(versions._URL.sub("", message))
    if cut is None:
        return []
    found = _NAME.findall(versions._URL.sub("", message)[cut.start() :])
    return list(dict.fromkeys(found))


def deprecations_page(pages: list[Page], docs: Path, data: dict | None = None) -> str:
    """Every API that warns in the newest probed release, since when, the text, and its page."""
    from handbook.site.nav import docs_path, title

    data = versions.load() if data is None else data
    lines = [
        "# Deprecations",
        "",
        "Every API of this handbook that emits a DeprecationWarning or FutureWarning in the newest probed torch",
        "release, as the version probe measured it (accessing the API, or running the page's examples), with the",
        "replacement the warning recommends, linked to its page where the handbook has one.",
        "",
    ]
    if not data:
        return "\n".join([*lines, "No probe has run yet.", ""])
    newest = data["releases"][-1]["release"]
    by_api = {(p.front or {}).get("api"): p for p in pages if p.kind == "api"}
    rows = []
    for page in pages:
        api = (page.front or {}).get("api")
        found = data["apis"].get(api or "", {})
        dep = found.get("deprecated")
        if page.kind != "api" or not dep or "until" in dep or found["status"].get(newest) != "present":
            continue
        message = html.escape(dep["message"], quote=False).replace("|", "\\|").replace("\n", " ")
        instead = []
        for name in replacements(dep["message"]):
            target = by_api.get(name)
            instead.append(f"[`{name}`]({docs_path(target, docs)})" if target else f"`{name}`")
        what = f"[`{title(page)}`]({docs_path(page, docs)})"
        subject = versions.warning_subject(dep["message"])
        params = [p for p in found.get("parameters") or {} if f"`{p}`" in subject or f"'{p}'" in subject]
        if params:
            what = f"parameter `{params[0]}` of {what}"
        rows.append(
            f"| {what} | {dep['since']} | {dep['category']} | {message} | {', '.join(instead) or 'see the page'} |"
        )
    if not rows:
        return "\n".join([*lines, f"No API of this handbook warns in torch {newest}.", ""])
    return "\n".join(
        [
            *lines,
            f"Measured on torch {newest}.",
            "",
            "| API | since | warning | text | replacement |",
            "|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
