"""The render step: turn a verified page into the Markdown the site generator shows.

Independent of any site generator: it takes page text and the verification record and returns Markdown. The
render step (build.py) calls it for every page and writes the result into build/docs.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

from handbook.i18n.strings import current, t
from handbook.lint import maps
from handbook.site import copyable, coverage, history
from handbook.site.official import official_markdown
from handbook.verify import record as records
from handbook.verify.document import Example, Page, parse_page
from handbook.verify.fences import fence_for

DEVICE_LABEL = {"cpu": "CPU", "cuda": "CUDA"}
GPU_ONLY = "# this example needs a GPU"


_EXAMPLE_LINK = re.compile(r"#example-(\d+)")


def badge(device: str, state: str, entry: dict | None) -> str:
    label = DEVICE_LABEL[device]
    machines = ", ".join(m for m in (entry or {}).get("machines", []) if m != records.UNNAMED)
    if state == "verified":
        where = t("Verified on {label}", label=label) + (f" · {machines}" if machines else "")
        text = f"{where} · torch {entry['torch']} · {entry['date']}"
    elif state == "failed" and entry and entry.get("failed_on"):
        text = t("{label}: verification failed on {machines}", label=label, machines=", ".join(entry["failed_on"]))
    else:
        template = {
            "failed": "{label}: verification failed",
            "stale": "{label}: stale — examples changed after the last verification",
            "skipped": "{label}: no example runs here",
        }.get(state, "{label}: not yet verified")
        text = t(template, label=label)
    return f'<span class="hb-badge hb-{state}">{html.escape(text)}</span>'


def badges(page: Page, record: dict) -> str:
    states = coverage.states(page, record)
    spans = [badge(d, *states[d]) for d in ("cpu", "cuda")]
    reasons = Counter(r for r in (coverage.block_label(e, states) for e in page.examples) if r is not None)
    if states["cpu"][0] == "verified" and coverage.main_examples_not_run(page, states):
        ran = len(page.examples) - sum(reasons.values())
        text = t(
            "CPU: {ran} of {total} blocks verified; the main examples need CUDA and did not run",
            ran=ran,
            total=len(page.examples),
        )
        spans[0] = f'<span class="hb-badge hb-partial">{html.escape(text)}</span>'
    if reasons:
        why = "; ".join(f"{n} {html.escape(t(r))}" for r, n in reasons.most_common())
        spans.append(f'<span class="hb-badge hb-notrun">{t("Not run: {why}", why=why)}</span>')
    return f'<p class="hb-badges">{" ".join(spans)}</p>'


def not_run_note(ex: Example, reason: str) -> list[str]:
    """The visible label under a block that was not executed: never let the page imply it ran."""
    if reason == coverage.NEEDS_CUDA:
        text = t("Not run: needs CUDA. No GPU run of this page is recorded, so this block has no verified output.")
    else:
        text = t("Not run: {reason}.", reason=reason)
    return ["", f'{ex.indent}<p class="hb-notrun" markdown="span">{html.escape(text, quote=False)}</p>']


def _output_lines(ex: Example) -> list[str]:
    ind = ex.indent

    def block(out) -> list[str]:
        title = t("Output")
        if ex.options.nondeterministic:
            title = t("Sample output, not compared ({why})", why=ex.options.nondeterministic)
            if out.header.sample:
                title += t(" — measured on {where}", where=out.header.sample)
        title = title.replace('"', "'")
        fence = fence_for(out.text)
        body = [f"{ind}{line}" if line else "" for line in out.text.rstrip("\n").split("\n")]
        return [f'{ind}{fence}text title="{title}"', *body, f"{ind}{fence}"]

    if ex.cuda_output is None:
        return block(ex.output)
    lines = []
    for tab, out in (("CPU", ex.output), ("CUDA", ex.cuda_output)):
        indented = [f"{ind}    {line[len(ind) :]}" if line else "" for line in block(out)]
        lines += [f'{ind}=== "{tab}"', "", *indented, ""]
    return lines[:-1]


def _machine_lines(ex: Example, recorded: dict[str, dict[str, dict]]) -> list[str]:
    """A machine-dependent example's outputs, one tab per machine the record has, from real runs only."""
    ind = ex.indent
    reason = html.escape(ex.options.machine)
    tabs = [(machine, found) for device in ("cpu", "cuda") for machine, found in recorded.get(device, {}).items()]
    if not tabs:
        return [
            "",
            f'{ind}!!! note "{t("Output depends on the machine")}"',
            "",
            f"{ind}    {t('{reason}. No run of this code is recorded yet.', reason=reason)}",
        ]
    intro = t("The output depends on the machine ({reason}). As printed on each machine that ran it:", reason=reason)
    lines = ["", f"{ind}*{intro}*", ""]
    for machine, found in tabs:
        text = found["output"].rstrip("\n") or t("(prints nothing)")
        fence = fence_for(text)
        title = t(
            "Output on {machine} · torch {torch} · {date}", machine=machine, torch=found["torch"], date=found["date"]
        )
        title = title.replace('"', "'")
        body = [f"{ind}    {line}" if line else "" for line in text.split("\n")]
        lines += [
            f'{ind}=== "{t("On {machine}", machine=machine)}"',
            "",
            f'{ind}    {fence}text title="{title}"',
            *body,
            f"{ind}    {fence}",
            "",
        ]
    return lines[:-1]


def _code_header(ex: Example, reason: str | None = None) -> str:
    notes = [t("not run: {why}", why=t(reason))] if reason and not ex.options.skip else []
    o = ex.options
    if o.raises:
        notes.append(t("raises {name}", name=o.raises))
    if o.warns:
        notes.append(t("warns {name}", name=o.warns))
    if o.skip:
        notes.append(t("not run: {why}", why=o.skip))
    if o.machine:
        notes.append(t("output depends on the machine"))
    if o.devices != ("cpu", "cuda"):
        notes.append(t("{devices} only", devices="/".join(DEVICE_LABEL[d] for d in o.devices)))
    title = f' title="{"; ".join(notes)}"' if notes else ""
    return f"{ex.indent}```python{title}"


def pitfalls_as_admonitions(lines: list[str]) -> list[str]:
    """Under "## Common pitfalls", each pitfall (a paragraph opening in bold, with its examples) becomes a
    warning admonition."""
    try:
        start = lines.index("## Common pitfalls") + 1
    except ValueError:
        return lines
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    chunks: list[list[str]] = [[]]
    fenced = False
    for i in range(start, end):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("**") and (i == start or not lines[i - 1].strip()):
            chunks.append([])
        chunks[-1].append(line)
    out = chunks[0]
    for chunk in chunks[1:]:
        while chunk and not chunk[-1].strip():
            chunk.pop()
        out += [f'!!! warning "{t("Pitfall")}"', "", *(f"    {x}" if x.strip() else "" for x in chunk), ""]
    return lines[:start] + out + lines[end:]


def short_version(version: str) -> str:
    """torch 2.15.0+cu132 -> 2.15.0: the wheel's local tag means nothing to a reader."""
    return version.split("+")[0]


def check_mark(ex: Example, states: dict[str, tuple[str, dict | None]], since: str | None = None) -> tuple[str, str]:
    """(admonition classes, title) of a check's collapsed mark: how we know (and, from the version probe, since
    which release the claim holds when it fails on earlier ones), or honestly why it did not run."""
    reason = coverage.block_label(ex, states)
    if reason == coverage.NEEDS_CUDA:
        return "note hb-check hb-notrun", t("Not run: needs CUDA (no GPU run is recorded) · show the check")
    if reason:
        return "note hb-check hb-notrun", t("Not run: {reason} · show the check", reason=reason)
    ran = [d for d in ex.options.devices if states[d][0] == "verified"]
    if not ran:
        failed = any(states[d][0] == "failed" for d in ex.options.devices)
        return "question hb-check", t(
            "Verification failed on this page · show the check" if failed else "Not verified yet · show the check"
        )
    entry = states[ran[0]][1] or {}
    where = " and ".join(DEVICE_LABEL[d] for d in ran)
    version = short_version(entry.get("torch", "?"))
    if since:
        template = "Checked on torch {torch} ({where}) · holds since torch {since} · show how"
        return "success hb-check", t(template, torch=version, where=where, since=since)
    return "success hb-check", t("Checked on torch {torch} ({where}) · show how", torch=version, where=where)


_ITEM = re.compile(r"^(?:[-*+]|\d+[.)]) +(?=\S)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def four_space_lists(lines: list[str]) -> list[str]:
    """Python-Markdown reads the blocks of a list item at 4 spaces (a paragraph, details or tab at 2 ends the list;
    a check after it becomes literal text). Pages indent items' content by their marker's width ("- " 2, "1. " 3):
    the body of each top-level item is moved to 4, code inside it keeping its relative indentation."""
    out: list[str] = []
    width = 0  # content indent of the open top-level item, 0 when none
    fence = None  # the fence marker of an open code block inside the item
    for line in lines:
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if width and fence is None and stripped and indent < width:
            width = 0  # a line left of the item's content ends it (a lazy continuation line stays as it is)
        if not width and fence is None:
            m = _ITEM.match(line)
            if m and m.end() < 4:
                width = m.end()
                out.append(line)
                continue
        if width:
            f = _FENCE.match(line)
            if f and fence is None:
                fence = f.group(1)
            elif (
                f
                and fence is not None
                and stripped.rstrip() == fence[0] * len(stripped.rstrip())
                and len(stripped.rstrip()) >= len(fence)
            ):
                fence = None
            out.append(" " * (4 - width) + line if stripped else line)
        else:
            out.append(line)
    return out


def _check_lines(ex: Example, states, since: str | None = None) -> list[str]:
    """A check renders collapsed under the claim it proves: a small mark that expands to its code."""
    ind = ex.indent
    classes, title = check_mark(ex, states, since)
    notes = [t("raises {name}", name=ex.options.raises)] * bool(ex.options.raises)
    notes += [t("warns {name}", name=ex.options.warns)] * bool(ex.options.warns)
    header = f' title="{"; ".join(notes)}"' if notes else ""
    code = [f"{ind}    {line}" if line.strip() else "" for line in ex.code.rstrip("\n").split("\n")]
    title = title.replace('"', "'")
    return [f'{ind}??? {classes} "{title}"', "", f"{ind}    ```python{header}", *code, f"{ind}    ```"]


SECTION_TITLES = ("Official definition", "Parameters", "Examples", "Common pitfalls", "Performance tips")


def translated_headings(lines: list[str]) -> list[str]:
    """An api page's fixed H2 titles in the page's language, keeping the English anchors (#common-pitfalls)."""
    if current() == "en":
        return lines
    return [
        f"## {t(line[3:])} {{#{line[3:].lower().replace(' ', '-')}}}" if line[3:] in SECTION_TITLES else line
        for line in lines
    ]


def _device_setup(examples: list[Example]) -> list[tuple[int, int, list[str]]]:
    """The visible `device = ...` line, in the first example of the page that reads `device` (copyable.py)."""
    for ex in examples:
        if ex.error is None and not ex.is_check and copyable.reads_undefined_device(ex.code):
            skip, new = copyable.setup_lines(ex.code, ex.options.devices)
            if ex.include:  # the snippet line is expanded later: the setup goes before the whole script
                skip, new = 0, ["import torch", new[-1]]
            return [(ex.line + skip, ex.line + skip, [f"{ex.indent}{x}" for x in new])]
    return []


def tldr(summary: str, added: str | None = None) -> str:
    """The front matter's one-line summary, shown under the title, with the release that added the API."""
    since = f' <span class="hb-added">{html.escape(added)}</span>' if added else ""
    text = html.escape(summary, quote=False)
    label = t("TL;DR")
    return f'<p class="hb-tldr" markdown="span"><span class="hb-tldr-label">{label}</span> {text}{since}</p>'


def render(
    text: str, path, record: dict, migration_maps: dict | None = None, source_lines: list[int] | None = None
) -> str:
    """Markdown for the site: front matter removed, badges and signature added, fences made plain.
    source_lines: for a translated text, the English page's example lines in order; the blocks keep the English
    anchors (#example-LINE), which other pages (What changed, Errors and warnings) link to."""
    page = parse_page(path, text)
    same = source_lines is not None and len(source_lines) == len(page.examples)
    english = {ex.line: line for ex, line in zip(page.examples, source_lines, strict=True)} if same else {}

    def to_english(line: str) -> str:
        return _EXAMPLE_LINK.sub(lambda m: f"#example-{english.get(int(m.group(1)), m.group(1))}", line)

    lines = text.split("\n")
    edits: list[tuple[int, int, list[str]]] = []  # 0-based [start, end) → replacement
    edits += _device_setup(page.examples)
    states = coverage.states(page, record)
    for i, ex in enumerate(page.examples):
        # every block can be linked to (the version history names them by line); id= adds a stable name
        ids = [f"example-{english.get(ex.line, ex.line)}"] + ([f"ex-{ex.options.id}"] if ex.options.id else [])
        anchor = [ex.indent + "".join(f'<a id="{name}"></a>' for name in ids), ""]
        if ex.is_check:
            since = history.holds_since(page, i)
            edits.append((ex.line - 1, ex.end_line, [*anchor, *_check_lines(ex, states, since)]))
            continue
        reason = coverage.block_label(ex, states)
        header = [*anchor, _code_header(ex, reason)]
        if ex.options.devices == ("cuda",) and not ex.include and GPU_ONLY not in ex.code:
            header.append(f"{ex.indent}{GPU_ONLY}")  # a reader who copies it learns why it fails on a CPU
        edits.append((ex.line - 1, ex.line, header))
        if ex.output is not None:
            end = (ex.cuda_output or ex.output).end_line
            edits.append((ex.output.line - 1, end, _output_lines(ex) + (not_run_note(ex, reason) if reason else [])))
        elif ex.options.machine:
            recorded = records.machine_outputs(record, page.rel, ex.code_hash)
            edits.append((ex.end_line, ex.end_line, _machine_lines(ex, recorded)))
        elif reason:
            edits.append((ex.end_line, ex.end_line, not_run_note(ex, reason)))
    h1 = next((h for h in page.headings if h.level == 1), None)
    if h1 is not None:
        summary = (page.front or {}).get("summary")
        added = history.added_label(page)
        extra = [tldr(summary, added)] if isinstance(summary, str) and summary.strip() else []
        extra += [badges(page, record)] if page.examples else []
        aliases = (page.front or {}).get("aliases") or []
        if aliases:
            # Searchable words people remember; spaced apart so each one is its own search token.
            words = " · ".join(html.escape(str(a)) for a in aliases)
            extra.append(f'<p class="hb-aliases">{t("Also searched as:")} {words}</p>')
        if extra:
            edits.append((h1.line, h1.line, ["", *extra]))
    official = next((h for h in page.headings if h.level == 2 and h.text == "Official definition"), None)
    api = page.front.get("api") if page.front else None
    if official is not None and api:
        edits.append((official.line, official.line, ["", *official_markdown(api)]))
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[start:end] = new
    lines = translated_headings(pitfalls_as_admonitions(lines)) + [to_english(x) for x in history.section(page)]
    if maps.markers(text):
        known = maps.load_all() if migration_maps is None else migration_maps
        lines = maps.expand("\n".join(lines), Path(path).resolve(), known).split("\n")
    if page.front is not None or (lines and lines[0].strip() == "---"):
        close = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[close + 1 :]
    return "\n".join(four_space_lists(lines))


def add_downloads(markdown: str, stem: str, blocks: str | None) -> str:
    """Links to the page's examples as a script and a notebook and to the page's source (to edit it), under the
    badges; the blocks' code for the "copy with setup" buttons (copy-setup.js), at the end."""
    source = f"{t('Page source:')} [{stem}.md]({stem}.md.txt)"
    if blocks is None:
        links = f'<p class="hb-downloads" markdown="span">{source}</p>'
    else:
        run = f"{t('Run it yourself:')} [{stem}.py]({stem}.py) · [{stem}.ipynb]({stem}.ipynb)"
        links = f'<p class="hb-downloads" markdown="span">{run} · {source}</p>'
    lines = markdown.split("\n")
    at = next((i + 1 for i, line in enumerate(lines) if line.startswith('<p class="hb-badges">')), None)
    if at is None:
        at = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
    lines[at:at] = [links]
    if blocks is None:
        return "\n".join(lines)
    return "\n".join(lines) + f'\n\n<script type="application/json" class="hb-blocks">{blocks}</script>\n'
