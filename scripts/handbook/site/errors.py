"""The "Errors and warnings" page: every error and warning message the handbook's examples produce, as the
verifier recorded them (the last line of a `raises=` example's output, the lines a `warns=` example appends), with
numbers, shapes and quoted names turned into placeholders, each linked to the examples that explain it.

The same normalized messages are search words of the pages that show them (search_data.py), so a message pasted
with its own numbers and shapes finds the page.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from handbook import DOCS
from handbook.i18n.strings import t
from handbook.site.nav import docs_path, title
from handbook.verify.document import Example, Page

_LINE = re.compile(r"^(?P<cls>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)): (?P<text>.+)$")
_PLACEHOLDERS = [
    (re.compile(r"0x[0-9a-f]+"), "0x…"),
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?(?:x-?\d+(?:\.\d+)?)*(?![\w.])"), "N"),
    (re.compile(r"\[(?:N, ?)+N\]"), "[N, …]"),
    (re.compile(r"\((?:N, ?)+N,?\)"), "(N, …)"),
]
LIMIT = 300  # characters of a message kept


@dataclass
class Message:
    kind: str  # the exception or warning class
    text: str  # normalized
    examples: list[tuple[Page, Example, str]] = field(default_factory=list)  # (page, example, the message as shown)


def normalize(text: str) -> str:
    """Numbers, shapes and sizes as placeholders: two pastes of one error with other sizes are one message."""
    text = " ".join(text.split())[:LIMIT]
    for pattern, placeholder in _PLACEHOLDERS:
        text = pattern.sub(placeholder, text)
    return text


def raised(ex: Example) -> list[tuple[str, str]]:
    """(class, message) lines the example's verified output holds: the error it raises, the warnings it emits."""
    if ex.output is None or not (ex.options.raises or ex.options.warns):
        return []
    found = []
    for line in ex.output.text.strip().split("\n"):
        m = _LINE.match(line.strip())
        if m and (m.group("cls").endswith(("Warning",)) or ex.options.raises):
            found.append((m.group("cls").rsplit(".", 1)[-1], m.group("text")))
    if ex.options.raises:  # only the last line is the raised error; earlier ones are printed output
        found = [f for f in found if f[0].endswith("Warning")] + found[-1:]
    return list(dict.fromkeys(found))


def collect(pages: list[Page]) -> list[Message]:
    by_key: dict[tuple[str, str], Message] = {}
    for page in pages:
        for ex in page.examples:
            for cls, text in raised(ex):
                key = (cls, normalize(text))
                by_key.setdefault(key, Message(cls, key[1])).examples.append((page, ex, text))
    return sorted(by_key.values(), key=lambda m: (m.kind.endswith("Warning"), m.kind, m.text.lower()))


def search_words(page: Page) -> list[str]:
    """The page's error and warning messages, normalized, as search words of the page."""
    return list(dict.fromkeys(f"{cls}: {normalize(text)}" for ex in page.examples for cls, text in raised(ex)))


def page(pages: list[Page], docs: Path = DOCS) -> str:

    messages = collect(pages)
    lines = [
        f"# {t('Errors and warnings')}",
        "",
        t(
            "Every error and warning message the handbook's examples produce, as the verifier recorded them, with "
            "numbers, shapes and names written as N. Each links to the example that shows it and the page that "
            "explains it. Paste a message into the search box: its own numbers do not matter."
        ),
        "",
        t("{n} messages from {k} examples.", n=len(messages), k=sum(len(m.examples) for m in messages)),
    ]
    current = None
    for m in messages:
        if m.kind != current:
            lines += ["", f"## {m.kind}", ""]
            current = m.kind
        where = sorted({(docs_path(p, docs), title(p), ex.line) for p, ex, _ in m.examples})
        links = ", ".join(f"[{html.escape(name)}]({path}#example-{line})" for path, name, line in where)
        lines.append(f"- `{m.kind}: {m.text.replace('`', '')}` — {links}")
    return "\n".join(lines) + "\n"
