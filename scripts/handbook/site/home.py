"""The generated parts of the home page: the module map, what the record has verified, the tags.

docs/index.md holds the prose and marks where each part goes with `<!-- home: NAME -->`; expand() replaces the
markers at build time, so no number on the home page is typed by hand. Independent of MkDocs.
"""

from __future__ import annotations

import html
import re
from collections import Counter

from handbook.i18n.strings import current
from handbook.lint import tags as vocabulary
from handbook.site import coverage
from handbook.site.nav import Site, by_category, flatten
from handbook.verify import record as records
from handbook.verify.document import Page

MARKER = re.compile(r"^<!-- home: ([a-z-]+) -->$", re.M)
OFFLINE_ZIP = "download/pytorch-handbook-offline.zip"


def module_map(site: Site) -> list[str]:
    """One row per module section: its page, how many entries, and its categories with their counts."""
    lines = ["| module | entries | categories |", "|---|---:|---|"]
    for section in flatten(site.sections):
        groups = by_category(section)
        cats = " · ".join(f"{c['en']} ({len(p)})" for c, p in groups) or "—"
        lines.append(f"| [{section.title}]({section.index}) | {len(section.pages)} | {cats} |")
    total = sum(len(s.pages) for s in flatten(site.sections))
    lines += [
        "",
        f"{total} API entries in all, plus {len(site.guides)} [guides](guides/index.md), "
        f"{len(site.comparisons)} [comparisons](comparisons/index.md) and {len(site.migration)} "
        f"[migration pages](migration/index.md).",
    ]
    return lines


def verification_counts(pages: list[Page], record: dict) -> dict:
    """Pages with examples, examples, and per device how many pages the record shows in each state."""
    with_examples = [p for p in pages if p.examples]
    counts = {"pages": len(with_examples), "examples": sum(len(p.examples) for p in with_examples)}
    machines: dict[str, set[str]] = {"cpu": set(), "cuda": set()}
    torch_versions: set[str] = set()
    for device in ("cpu", "cuda"):
        states: Counter = Counter()
        for page in with_examples:
            state, info = records.status(record, page.rel, device, page.examples_hash)
            states[state] += 1
            if state == "verified":
                machines[device].update(m for m in info["machines"] if m != records.UNNAMED)
                torch_versions.add(info["torch"])
        counts[device] = dict(states)
    counts["machines"] = {d: sorted(m) for d, m in machines.items()}
    counts["torch"] = sorted(torch_versions)
    return counts


def verification_summary(pages: list[Page], record: dict) -> list[str]:
    c = verification_counts(pages, record)
    t = coverage.totals(pages, record)
    not_run = "; ".join(f"{n:,} {html.escape(reason)}" for reason, n in sorted(t.not_run.items(), key=lambda x: -x[1]))
    lines = [
        f"The record (`verification.json`) covers **{c['pages']} pages** holding **{t.examples:,} examples** and "
        f"**{t.checks:,} claim checks** (a check is a short assertion placed under the sentence it proves).",
        "",
        "| device | examples run | claim checks run |",
        "|---|---:|---:|",
        *(
            f"| {label} | {t.run[d]['example']:,} | {t.run[d]['check']:,} |"
            for d, label in (("cpu", "CPU"), ("cuda", "CUDA"))
        ),
        "",
        f"Not run: {not_run or 'none'}. Each block that did not run is labelled on its page.",
        "",
        "Pages by state:",
        "",
        "| device | verified | stale (examples changed since) | failed | not yet verified |",
        "|---|---:|---:|---:|---:|",
    ]
    for device, label in (("cpu", "CPU"), ("cuda", "CUDA")):
        s = c[device]
        lines.append(
            f"| {label} | {s.get('verified', 0)} | {s.get('stale', 0)} | {s.get('failed', 0)} "
            f"| {s.get('unverified', 0) + s.get('skipped', 0)} |"
        )
    names = [f"{html.escape(m)} ({d.upper()})" for d in ("cpu", "cuda") for m in c["machines"][d]]
    lines += [
        "",
        f"Verified on: {', '.join(names) or 'no named machine yet'}; "
        f"torch {', '.join(c['torch']) or '—'}. Every page's badges say where it was verified; the "
        "[Verification status](verification.md) page lists every page.",
    ]
    return lines


def tag_cloud(pages: list[Page]) -> list[str]:
    used = Counter(t for p in pages for t in ((p.front or {}).get("tags") or []))
    items = [
        f"[{e['en']} · {e['zh']} ({used[e['id']]})](tags.md#tag-{e['id']})" for e in vocabulary.load() if used[e["id"]]
    ]
    return [" · ".join(items)]


def download(offline: bool) -> list[str]:
    if offline:
        return ["You are reading the offline copy: it browses and searches without a network connection."]
    return [
        # the zip lies at the site's root; the Chinese home page is zh/index.md
        f'<a class="md-button" href="{"" if current() == "en" else "../"}{OFFLINE_ZIP}">Download the handbook for '
        "offline reading</a> — one zip; "
        "unzipped, it browses and searches from `file://` with no network request.",
    ]


def expand(markdown: str, site: Site, pages: list[Page], record: dict, offline: bool) -> str:
    parts = {
        "modules": lambda: module_map(site),
        "verification": lambda: verification_summary(pages, record),
        "tags": lambda: tag_cloud(pages),
        "download": lambda: download(offline),
    }

    def replace(m: re.Match) -> str:
        if m.group(1) not in parts:
            raise ValueError(f"unknown home-page marker {m.group(0)} (known: {', '.join(parts)})")
        return "\n".join(parts[m.group(1)]())

    return MARKER.sub(replace, markdown)
