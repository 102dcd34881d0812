"""What ran and what did not, from the record: per block, per page and for the whole handbook.

A block (example or check) ran when a device it runs on has a current record entry for its page. Everything else
is "not run", with its reason (a CUDA-only block on a record without a GPU run, `skip=`): the page labels each such
block, the badges and the banner count them, and nothing implies they ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from handbook.i18n.strings import t
from handbook.verify import record as records
from handbook.verify.document import Example, Page

DEVICES = ("cpu", "cuda")
RAN = ("verified", "failed")  # states in which the page's current examples were executed on that device
NEEDS_CUDA = "needs CUDA"
PAGE_NOT_RUN = "page not verified yet"  # the page's badge says so; its blocks carry no label of their own


def states(page: Page, record: dict) -> dict[str, tuple[str, dict | None]]:
    return {d: records.status(record, page.rel, d, page.examples_hash) for d in DEVICES}


def not_run(ex: Example, page_states: dict[str, tuple[str, dict | None]]) -> str | None:
    """Why this block was not executed on any recorded machine, or None when it was."""
    if ex.options.skip:
        return ex.options.skip
    if any(page_states[d][0] in RAN for d in ex.options.devices):
        return None
    if ex.options.devices == ("cuda",):
        return NEEDS_CUDA
    return PAGE_NOT_RUN


def section_of(page: Page, line: int) -> str | None:
    """The H2 section a line is in."""
    current = None
    for h in page.headings:
        if h.level == 2 and h.line < line:
            current = h.text
    return current


def block_label(ex: Example, page_states) -> str | None:
    """The reason shown on the block itself: what is true of this block, not of its whole page."""
    reason = not_run(ex, page_states)
    return None if reason == PAGE_NOT_RUN else reason


def main_examples_not_run(page: Page, page_states) -> bool:
    """The page's main examples (its Examples section; the first of them or half of them) did not run."""
    main = [e for e in page.examples if not e.is_check and section_of(page, e.line) == "Examples"]
    if not main:
        return False
    missing = [e for e in main if not_run(e, page_states)]
    return bool(missing) and (main[0] in missing or 2 * len(missing) >= len(main))


@dataclass
class Totals:
    pages: int = 0
    examples: int = 0
    checks: int = 0
    run: dict[str, dict[str, int]] = field(default_factory=lambda: {d: {"example": 0, "check": 0} for d in DEVICES})
    not_run: dict[str, int] = field(default_factory=dict)  # reason -> blocks

    @property
    def cuda_only_not_run(self) -> int:
        return self.not_run.get(NEEDS_CUDA, 0)

    def as_dict(self) -> dict:
        return {
            "pages": self.pages,
            "examples": self.examples,
            "checks": self.checks,
            "run": self.run,
            "not_run": self.not_run,
            "cuda_only_not_run": self.cuda_only_not_run,
        }


def totals(pages: list[Page], record: dict) -> Totals:
    t = Totals()
    for page in pages:
        if not page.examples:
            continue
        t.pages += 1
        page_states = states(page, record)
        for ex in page.examples:
            t.checks += ex.is_check
            t.examples += not ex.is_check
            reason = not_run(ex, page_states)
            if reason is not None:
                t.not_run[reason] = t.not_run.get(reason, 0) + 1
                continue
            for d in ex.options.devices:
                if page_states[d][0] in RAN:
                    t.run[d][ex.kind] += 1
    return t


def banner(t_: Totals) -> str:
    """The site-wide line: what ran, and what did not (in the language being rendered)."""
    cpu, cuda = t_.run["cpu"], t_.run["cuda"]
    text = t(
        "{examples} examples and {checks} claim checks run on CPU",
        examples=f"{cpu['example']:,}",
        checks=f"{cpu['check']:,}",
    )
    if cuda["example"] or cuda["check"]:
        text += t(
            ", {examples} examples and {checks} checks on CUDA",
            examples=f"{cuda['example']:,}",
            checks=f"{cuda['check']:,}",
        )
    if t_.cuda_only_not_run:
        text += t("; {n} CUDA-only blocks not yet run (no GPU run is recorded)", n=f"{t_.cuda_only_not_run:,}")
    skipped = sum(n for reason, n in t_.not_run.items() if reason != NEEDS_CUDA)
    if skipped:
        text += t("; {n} not run for other reasons, each labelled on its page", n=f"{skipped:,}")
    return text
