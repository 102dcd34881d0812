"""The "Version history" section of an api page and the generated Deprecations page, from versions/history.json.

Everything shown comes from the probe (`python -m handbook versions probe`): which releases had the API, each
parameter's history, the deprecation warning, and which releases print what the page's examples show.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from handbook.i18n.strings import t
from handbook.releases import versions
from handbook.site.nav import docs_path, title
from handbook.verify.document import Page
from handbook.verify.fences import fence_for

STATE = {"present": "✓", "absent": "—", "unknown": "?"}
SHOWN = ("same", "ran")


def _label(release: str) -> str:
    return ".".join(release.split(".")[:2])


def added_text(found: dict, releases: list[str]) -> str:
    added = found.get("added")
    if added is None:
        return t("not found in any probed release")
    oldest = releases[0]
    if added.startswith("≤"):
        first = next(r for r in releases if found["status"].get(r) == "present")
        if first == oldest:
            return t(
                "{added} (present in the oldest release probed, {oldest}; earlier releases were not probed)",
                added=added,
                oldest=oldest,
            )
        return t("{added} (first found in {first}; the release before it was not probed)", added=added, first=first)
    first = next(r for r in releases if found["status"].get(r) == "present")
    return t("**{added}** (first found in torch {first})", added=added, first=first)


def added_label(page: Page, data: dict | None = None) -> str | None:
    """ "Added in torch 2.4" (or "In torch ≤ 1.13") for the page's API, from the probe; None without data."""
    api = (page.front or {}).get("api")
    if page.kind != "api" or not api:
        return None
    data = versions.load() if data is None else data
    added = ((data or {}).get("apis", {}).get(api) or {}).get("added")
    if not added:
        return None
    if added.startswith("≤"):
        return t("In torch {added}", added=added.replace("≤", "≤ "))
    return t("Added in torch {added}", added=added)


def _default(value) -> str:
    return t("required") if value is None else f"`{value}`"


def parameter_lines(found: dict) -> list[str]:
    """Only the parameters whose history says something: added after the API, removed, or a changed default."""
    api_added = found.get("added")
    out = []
    for name, p in (found.get("parameters") or {}).items():
        notes = []
        if p["added"] != api_added and not p["added"].startswith("≤"):
            notes.append(t("added in {release}", release=p["added"]))
        if "removed" in p:
            notes.append(t("removed in {release}", release=p["removed"]))
        if "defaults" in p:
            steps = " → ".join(f"{_default(d['value'])} ({d['since']})" for d in p["defaults"])
            notes.append(t("default changed: {steps}", steps=steps))
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


def _cell(release: str, found: dict, examples: list[dict]) -> str:
    state = found["status"].get(release, "unknown")
    ran = [e["results"][release] for e in examples if release in e["results"] and e["results"][release] != "skipped"]
    shown = sum(1 for v in ran if v in SHOWN)
    kind = {"present": "ok", "absent": "absent"}.get(state, "unknown")
    if kind == "ok" and shown < len(ran):
        kind = "differs"
    count = f" {shown}/{len(ran)}" if ran else ""
    api = t({"present": "API present", "absent": "API absent", "unknown": "not probed"}[state])
    title = t("torch {release}: {api}", release=release, api=api)
    if ran:
        title += t("; {shown} of {ran} blocks print or assert what this page shows", shown=shown, ran=len(ran))
    return (
        f'<span class="hb-rel hb-rel-{kind}" title="{html.escape(title)}">'
        f"<b>{_label(release)}</b> {STATE[state]}{count}</span>"
    )


def strip(releases: list[str], found: dict, examples: list[dict]) -> list[str]:
    """One small cell per release, wrapping to the width of a phone: API present, blocks as shown."""
    cells = [_cell(r, found, examples) for r in releases]
    legend = t("✓ API present · — absent · n/m: blocks (examples and checks) that print or assert what this page shows")
    return ['<div class="hb-strip">', *cells, "</div>", "", f'<p class="hb-strip-legend">{legend}</p>']


def _fence(text: str, title: str, indent: str) -> list[str]:
    fence = fence_for(text)
    body = [f"{indent}{line}" if line else "" for line in (text.rstrip("\n") or t("(prints nothing)")).split("\n")]
    return [f'{indent}{fence}text title="{title}"', *body, f"{indent}{fence}"]


def anchor(ex) -> str:
    """The anchor the render step puts before every example and check (render.py)."""
    return f"example-{ex.line}"


def _what(ex) -> str:
    label = t("check at line {line}" if ex.is_check else "example at line {line}", line=ex.line)
    return f"[{label}](#{anchor(ex)})"


def _span(releases: list[str], chosen) -> str:
    ranges = versions.ranges(releases, set(chosen))
    return ", ".join(_label(a) if a == b else f"{_label(a)} … {_label(b)}" for a, b in ranges)


def _grouped(matched, releases: list[str], outcome: str) -> list[tuple[str, list]]:
    """Releases grouped by which blocks had this outcome there: [(span of releases, [blocks])]."""
    by_release = {r: tuple(ex.line for _, ex, e in matched if e["results"].get(r) == outcome) for r in releases}
    groups: dict[tuple, list[str]] = {}
    for r in releases:
        if by_release[r]:
            groups.setdefault(by_release[r], []).append(r)
    lines_of = {ex.line: ex for _, ex, _ in matched}
    return [(_span(releases, rs), [lines_of[n] for n in key]) for key, rs in groups.items()]


MESSAGE_LIMIT = 200  # characters of an error message quoted in a one-line entry


def code(text: str) -> str:
    """Inline code for any text, backticks included (CommonMark: a longer backtick string around it)."""
    text = " ".join(text.split())
    if len(text) > MESSAGE_LIMIT:
        text = text[: MESSAGE_LIMIT - 1] + "…"
    ticks = "`" * (max((len(m) for m in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or len(ticks) > 1 else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _state(e: dict, r: str) -> str:
    v = e["results"].get(r)
    if v in SHOWN:
        return t("prints or asserts what this page shows")
    if v == "differs":
        return t("printed other output")
    error = (e.get("errors") or {}).get(r)
    return t("failed: {error}", error=code(error)) if error else t("failed")


def _outcome_key(e: dict, r: str):
    """What a release did with a block, as compared between releases (None: not comparable there)."""
    v = e["results"].get(r)
    if v in SHOWN:
        return "shown"
    if v == "differs":
        return ("differs", (e.get("outputs") or {}).get(r))
    if v == "error":
        return ("error", (e.get("errors") or {}).get(r))
    return None  # skipped, missing-api, unavailable, not probed


def behaviour_changes(matched, releases: list[str], found: dict) -> list[str]:
    """One line per change of a block's outcome between two adjacent releases that both have the API."""
    out = []
    for _, ex, e in matched:
        for before, after in zip(releases, releases[1:], strict=False):
            a, b = _outcome_key(e, before), _outcome_key(e, after)
            both = found["status"].get(before) == "present" and found["status"].get(after) == "present"
            if a is None or b is None or a == b or not both:
                continue
            out.append(
                t(
                    "- **{after}**: the {what} {now}; on {before}, it {then}.",
                    after=_label(after),
                    what=_what(ex),
                    now=_state(e, after),
                    before=_label(before),
                    then=_state(e, before),
                )
            )
    return out


def example_lines(page: Page, matched, releases: list[str], found: dict | None = None) -> list[str]:
    if not matched:
        return [
            f"- {t('**Examples**')}: "
            + t("this page's examples changed since the last probe; run `versions probe --again`.")
        ]
    found = found or {"status": {}}
    ok = [
        r
        for r in releases
        if all(e["results"].get(r) in (*SHOWN, "skipped", None) for _, _, e in matched)
        and any(e["results"].get(r) in SHOWN for _, _, e in matched)
    ]
    span = _span(releases, ok)
    checks = sum(ex.is_check for _, ex, _ in matched)
    blocks = t("{n} examples", n=len(matched) - checks) + (t(" and {n} checks", n=checks) if checks else "")
    head = f"- {t('**Examples**')}: "
    if span:
        lines = [
            head + t("all {blocks} print or assert what this page shows on torch {span}.", blocks=blocks, span=span)
        ]
    else:
        lines = [head + t("no probed release prints or asserts everything this page shows ({blocks}).", blocks=blocks)]
    for where, hit in _grouped(matched, releases, "missing-api"):
        named = "" if len(hit) == len(matched) else " (" + ", ".join(_what(ex) for ex in hit) + ")"
        template = "On torch {where}, {hit} of {total} use an API that release lacks{named}."
        lines.append("- " + t(template, where=where, hit=len(hit), total=len(matched), named=named))
    for where, hit in _grouped(matched, releases, "unavailable"):
        template = "On torch {where}, {hit} of {total} could not run (no torchvision for it)."
        lines.append("- " + t(template, where=where, hit=len(hit), total=len(matched)))
    for _, ex, e in matched:
        errors = {r: (e.get("errors") or {}).get(r, "") for r in releases if e["results"].get(r) == "error"}
        for message in dict.fromkeys(errors.values()):
            where = _span(releases, [r for r, m in errors.items() if m == message])
            failing = t("The {what} fails on torch {where}", what=_what(ex), where=where)
            lines.append(f"- {failing}" + (f": {code(message)}" if message else "") + ".")
    changes = behaviour_changes(matched, releases, found)
    if changes:
        lines += [
            "",
            t("**Behaviour changes** (a block's outcome changed between two releases that both have the API):"),
            "",
        ]
        lines += changes
    for _, ex, e in matched:
        differs = [r for r in releases if e["results"].get(r) == "differs"]
        if not differs:
            continue
        where = ", ".join(_label(r) for r in differs)
        title = t("Example at line {line}: output differs on torch {where}", line=ex.line, where=where)
        lines += ["", f'??? note "{title}"', ""]
        lines += [f"    [{t('The example on this page')}](#{anchor(ex)})", ""]
        lines += _fence(ex.expected("cpu"), t("As this page shows"), "    ")
        for output_hash in dict.fromkeys(e["outputs"][r] for r in differs):
            on = ", ".join(_label(r) for r in differs if e["outputs"][r] == output_hash)
            lines += [""] + _fence(e["texts"][output_hash], t("On torch {on}", on=on), "    ")
    return lines


def holds_since(page: Page, index: int, data: dict | None = None) -> str | None:
    """For a check: the release from which it holds on every probed release, when it fails on earlier ones where
    the API exists; None when it holds throughout or has no data."""
    data = versions.load() if data is None else data
    if not data:
        return None
    recorded = data.get("pages", {}).get(page.rel, {}).get("examples", [])
    ex = page.examples[index]
    if index >= len(recorded) or recorded[index]["code"] != ex.code_hash:
        return None
    results = recorded[index]["results"]
    releases = [r["release"] for r in data["releases"] if r["release"] in results]
    holding = [r for r in releases if results[r] in SHOWN]
    if not holding or holding[-1] != releases[-1]:
        return None
    first = holding[0]
    tail = releases[releases.index(first) :]
    failed_before = any(results[r] in ("error", "differs") for r in releases[: releases.index(first)])
    return _label(first) if all(results[r] in SHOWN for r in tail) and failed_before else None


def section(page: Page, data: dict | None = None) -> list[str]:
    """The page's Version history section, as Markdown lines; [] for pages that are not api pages."""
    api = (page.front or {}).get("api")
    if page.kind != "api" or not api:
        return []
    data = versions.load() if data is None else data
    lines = ["", f"## {t('Version history')} {{#version-history}}", ""]
    found = (data or {}).get("apis", {}).get(api)
    if found is None:
        return [*lines, t("Not probed yet: `python -m handbook versions probe --again` measures it."), ""]
    releases = [r["release"] for r in data["releases"]]
    examples = data["pages"].get(page.rel, {}).get("examples", [])
    matched = _matching(page, examples)
    lines += [
        t(
            "Measured by running this page against each torch release from {first} to {last} ({n} releases probed).",
            first=releases[0],
            last=releases[-1],
            n=len(releases),
        ),
        "",
        *strip(releases, found, [e for _, _, e in matched]),
        "",
        f"- {t('**Added**')}: {added_text(found, releases)}",
    ]
    if "removed" in found:
        lines.append(f"- {t('**Removed**')}: {found['removed']}")
    params = parameter_lines(found)
    if params:
        lines.append(f"- {t('**Parameters**')}: " + "; ".join(params))
    deprecated = found.get("deprecated")
    if deprecated:
        message = html.escape(" ".join(deprecated["message"].split()), quote=False)
        if "until" in deprecated:  # the warning stopped: the deprecation was carried out, or withdrawn
            when = t(
                "on {since} until the release before {until} (not emitted from {until} on; see the behaviour changes)",
                since=deprecated["since"],
                until=deprecated["until"],
            )
            lines.append(f"- {t('**Deprecation warning**')} {when}: {deprecated['category']} “{message}”")
        else:
            when = t("since {since}", since=deprecated["since"])
            lines.append(f"- {t('**Deprecated**')} {when}: {deprecated['category']} “{message}”")
    lines += example_lines(page, matched, releases, found)
    return [*lines, ""]


_NAME = re.compile(r"\btorch(?:vision)?(?:\.\w+)+|(?<=`)\w+(?=`)")


def replacements(message: str) -> list[str]:
    """The names a deprecation message recommends instead: those after its "use …" / "instead" clause."""
    cut = versions.REPLACEMENT.search(versions.URL.sub("", message))
    if cut is None:
        return []
    found = _NAME.findall(versions.URL.sub("", message)[cut.start() :])
    return list(dict.fromkeys(found))


def deprecations_page(pages: list[Page], docs: Path, data: dict | None = None) -> str:
    """Every API that warns in the newest probed release, since when, the text, and its page."""
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
