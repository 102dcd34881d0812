"""Parse a Markdown page into its regions: front matter, headings, links and examples.

Line numbers are 1-based and always those of the page file, so every example is named `path:line`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

from handbook import DOCS, ROOT
from handbook.verify.fences import (
    KINDS,
    FenceError,
    Options,
    OutputHeader,
    parse_options,
    parse_output_header,
    split_info,
)
from handbook.verify.paths import describe, link_on_the_way, shown_path

_INCLUDE = re.compile(r'^--8<--\s+"([^"]+)"$')
_BROKEN_FENCE = re.compile(r"^\s*```+\s*(python|check|output)\b[^`]*`")
_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:")
_CLOSING = re.compile(r"^[\s>]*(`{3,}|~{3,})\s*$")
_md = MarkdownIt("commonmark").enable("table")


@dataclass
class OutputBlock:
    line: int  # opening fence
    end_line: int  # closing fence
    text: str
    header: OutputHeader

    @property
    def label(self) -> str:
        return self.header.label


@dataclass
class Example:
    path: str
    line: int  # opening fence of the python block
    end_line: int  # its closing fence
    indent: str  # indentation of the fence (inside list items)
    code: str
    filename: str  # what tracebacks name: the page, or the included script
    code_line: int  # line of the code's first line in `filename`
    options: Options
    include: str | None = None
    error: str | None = None  # a fence or include problem: the example cannot run
    output: OutputBlock | None = None
    cuda_output: OutputBlock | None = None
    kind: str = "example"  # "example" (```python```: its output is compared) or "check" (```check```: it asserts)
    claim: str = ""  # a check's claim: the prose it follows (the paragraph or list item before it)

    @property
    def name(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def is_check(self) -> bool:
        return self.kind == "check"

    def expected(self, device: str) -> str:
        if device == "cuda" and self.cuda_output is not None:
            return self.cuda_output.text
        return self.output.text if self.output is not None else ""

    def runs_on(self, device: str) -> bool:
        return device in self.options.devices

    @property
    def code_hash(self) -> str:
        """What a sample was measured with: the code, and the relation it was asserted against."""
        relation = self.options.relation
        measured = self.code if relation is None else f"{self.code}\0relation={relation}"
        return hashlib.sha256(measured.encode()).hexdigest()[:10]

    def sample_block(self, device: str) -> OutputBlock | None:
        """Where a nondeterministic example keeps its sample for this device."""
        if device == "cuda" and "cpu" in self.options.devices:
            return self.cuda_output
        return self.output


@dataclass
class Heading:
    level: int
    text: str
    line: int


@dataclass
class Link:
    target: str
    line: int


@dataclass
class Prose:
    """A paragraph or a list item: the text a claim lives in."""

    line: int  # first line
    end_line: int  # last line
    text: str
    kind: str  # "paragraph" | "item"
    depth: int = 0  # list nesting of the block (0: not in a list)


@dataclass
class TextBlock:
    """A block of prose as the source has it, for translation: a heading, a paragraph (in a list item or not) or a
    table row, with its lines (1-based, inclusive)."""

    kind: str  # "heading" | "paragraph" | "row"
    line: int
    end_line: int


@dataclass
class Problem:
    """A structural problem found while parsing; lint reports it under `code`."""

    line: int
    code: str
    message: str


@dataclass
class Page:
    path: Path
    rel: str
    text: str
    front: dict | None = None
    front_lines: dict[str, int] = field(default_factory=dict)
    headings: list[Heading] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    prose: list[Prose] = field(default_factory=list)  # paragraphs and list items, in page order
    text_blocks: list[TextBlock] = field(default_factory=list)  # headings, paragraphs, table rows: what translates
    examples: list[Example] = field(default_factory=list)  # examples and checks, in page order
    problems: list[Problem] = field(default_factory=list)
    newline: str = "\n"  # the file's line ending; `text` always holds "\n"
    digest: str | None = None  # sha256 of the file's bytes as read: --update writes only over these
    unreadable: bool = False  # not UTF-8: nothing of it was parsed

    @property
    def unsafe_to_rewrite(self) -> list[Problem]:
        """Problems that make the page's structure uncertain: --update must not touch it."""
        return [p for p in self.problems if p.code in ("HB005", "HB063", "HB065")]

    def section(self, title: str) -> tuple[int, int] | None:
        """(line of the H2 heading, first line after the section) of the H2 section with this title."""
        h2 = [h for h in self.headings if h.level == 2]
        for i, h in enumerate(h2):
            if h.text == title:
                return h.line, (h2[i + 1].line if i + 1 < len(h2) else len(self.text.split("\n")) + 1)
        return None

    def section_of(self, line: int) -> str | None:
        """The title of the H2 section a line is in."""
        current = None
        for h in self.headings:
            if h.level == 2 and h.line < line:
                current = h.text
        return current

    def in_section(self, title: str, items: list) -> list:
        span = self.section(title)
        return [x for x in items if span and span[0] < x.line < span[1]]

    def bullets(self, title: str) -> list[Prose]:
        """The top-level list items of a section (one per parameter under Parameters)."""
        return [p for p in self.in_section(title, self.prose) if p.kind == "item" and p.depth == 1]

    def pitfalls(self) -> list[Prose]:
        """Each pitfall of "Common pitfalls": from a paragraph opening in bold to the next one (or the section's
        end), with its examples and checks between. The Prose spans the whole pitfall; its text is the lead."""
        span = self.section("Common pitfalls")
        if span is None:
            return []
        lines = self.text.split("\n")
        leads = [
            p
            for p in self.prose
            if span[0] < p.line < span[1] and p.kind == "paragraph" and not p.depth
            if lines[p.line - 1].startswith("**")
        ]
        return [
            Prose(lead.line, (leads[i + 1].line if i + 1 < len(leads) else span[1]) - 1, lead.text, "pitfall")
            for i, lead in enumerate(leads)
        ]

    @property
    def kind(self) -> str | None:
        return self.front.get("kind") if isinstance(self.front, dict) else None

    @cached_property
    def examples_hash(self) -> str:
        """What verification covers: code, options and expected output of every example."""
        data = [
            [e.code, e.options.raw, e.output.text if e.output else None, e.cuda_output.text if e.cuda_output else None]
            for e in self.examples
        ]
        return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:16]


def relpath(path: Path) -> str:
    path = path.resolve()
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def read_page_text(path: Path) -> tuple[str, str, str]:
    """(text with "\n" line ends, the file's line ending, sha256 of its bytes). UnicodeDecodeError if not UTF-8."""
    data = Path(path).read_bytes()
    text = data.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    return text.replace("\r\n", "\n"), newline, hashlib.sha256(data).hexdigest()


def decode_error_line(data: bytes, exc: UnicodeDecodeError) -> int:
    return data[: exc.start].count(b"\n") + 1


def parse_page(path: Path, text: str | None = None) -> Page:
    path = Path(path)
    newline, digest = "\n", None
    link = link_on_the_way(path) if text is None else None
    if link is not None:  # never read, never written: reports name the link, not where it leads
        page = Page(path=Path(os.path.abspath(path)), rel=shown_path(path), text="", unreadable=True)
        why = f"{describe(link)}; a page must be a regular file in the repository, so it was not read"
        page.problems.append(Problem(1, "HB006", why))
        return page
    if text is None:
        try:
            text, newline, digest = read_page_text(path)
        except UnicodeDecodeError as exc:
            page = Page(path=path.resolve(), rel=relpath(path), text="", unreadable=True)
            line = decode_error_line(path.read_bytes(), exc)
            page.problems.append(Problem(line, "HB005", f"page is not valid UTF-8 ({exc.reason} at byte {exc.start})"))
            return page
    page = Page(path=path.resolve(), rel=relpath(path), text=text, newline=newline, digest=digest)
    lines = text.split("\n")
    body_lines = _read_front_matter(page, lines)
    # A lone CR ends a line for markdown-it but not for our line numbers: parse it as the space it shows as.
    tokens = _md.parse("\n".join(body_lines).replace("\r", " "))
    _blocks(page, tokens, lines)
    for n, line in enumerate(lines, 1):
        # CommonMark: a backtick in the info string means this is not a fence, so the example would never run
        if _BROKEN_FENCE.match(line):
            page.problems.append(Problem(n, "HB063", "fence line holds a backtick, so it is no code fence at all"))
    broken = [p.line for p in page.problems if p.code == "HB063"]
    if broken:
        # The broken fence's closing line then opens a fence that never closes: one mistake, reported once.
        page.problems = [p for p in page.problems if not (p.code == "HB065" and p.line > broken[0])]
    return page


class _FrontMatterLoader(yaml.SafeLoader):
    """safe_load without aliases: front matter is a few flat keys, and an alias (`*name`, or a `<<:` merge) can
    only make it larger, up to billions of nodes from a few lines ("billion laughs"). The first one is an error."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"found the alias *{event.anchor}; front matter may not use YAML aliases", event.start_mark
            )
        return super().compose_node(parent, index)


def _read_front_matter(page: Page, lines: list[str]) -> list[str]:
    """Parse the front matter; return the lines with it blanked, so line numbers stay true."""
    if not lines or lines[0].strip() != "---":
        page.problems.append(Problem(1, "HB001", "page has no front matter (a first line '---')"))
        return lines
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        page.problems.append(Problem(1, "HB001", "front matter is not closed by a line '---'"))
        return lines
    block = "\n".join(lines[1:end])
    try:
        data = yaml.load(block, Loader=_FrontMatterLoader) if block.strip() else {}
    except RecursionError:
        page.problems.append(Problem(1, "HB001", "front matter is nested too deeply to read"))
        return [""] * (end + 1) + lines[end + 1 :]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark else 1
        page.problems.append(Problem(line, "HB001", f"front matter is not valid YAML: {getattr(exc, 'problem', exc)}"))
        return [""] * (end + 1) + lines[end + 1 :]
    if not isinstance(data, dict):
        page.problems.append(Problem(1, "HB001", "front matter must be a mapping of keys to values"))
        data = None
    page.front = data
    for i in range(1, end):
        m = _KEY_LINE.match(lines[i])
        if m:
            page.front_lines.setdefault(m.group(1), i + 1)
    return [""] * (end + 1) + lines[end + 1 :]


CLAIM_LIMIT = 400  # characters of a check's claim kept (reports quote it)


def _blocks(page: Page, tokens, lines: list[str]) -> None:
    last_example: Example | None = None
    prose = ""  # the last paragraph's text: what a check placed after it proves
    items: list[Prose] = []  # list items still open
    for i, tok in enumerate(tokens):
        if tok.type in ("heading_open", "paragraph_open", "tr_open") and tok.map:
            kind = {"heading_open": "heading", "paragraph_open": "paragraph", "tr_open": "row"}[tok.type]
            page.text_blocks.append(TextBlock(kind, tok.map[0] + 1, tok.map[1]))
        if tok.type == "list_item_open":
            items.append(Prose(tok.map[0] + 1, tok.map[1], "", "item", len(items) + 1))
            page.prose.append(items[-1])
        elif tok.type == "list_item_close":
            items.pop()
        elif tok.type == "paragraph_open" and not items:
            page.prose.append(Prose(tok.map[0] + 1, tok.map[1], tokens[i + 1].content, "paragraph"))
        if tok.type == "inline" and items and i and tokens[i - 1].type == "paragraph_open":
            for item in items:
                item.text = f"{item.text}\n{tok.content}" if item.text else tok.content
        if tok.type == "heading_open":
            inline = tokens[i + 1]
            page.headings.append(Heading(int(tok.tag[1]), inline.content.strip(), tok.map[0] + 1))
            prose = ""
        elif tok.type == "inline" and tok.children:
            for child in tok.children:
                if child.type == "link_open":
                    page.links.append(Link(str(child.attrGet("href") or ""), tok.map[0] + 1))
            if i and tokens[i - 1].type == "paragraph_open":
                prose = " ".join(tok.content.split())
        elif tok.type == "fence":
            line, end_line = tok.map[0] + 1, tok.map[1]
            if not _closes(tok, lines, end_line):
                page.problems.append(
                    Problem(line, "HB065", "code fence opened here is never closed (it runs to the end of the page)")
                )
            try:
                lang, words = split_info(tok.info)
            except FenceError as exc:
                page.problems.append(Problem(line, "HB060", str(exc)))
                lang, words = "", []
            if lang in KINDS:
                last_example = _example(page, tok, line, end_line, words, lines, KINDS[lang])
                if last_example.is_check:
                    last_example.claim = prose[:CLAIM_LIMIT]
                page.examples.append(last_example)
            elif lang == "output":
                _attach_output(page, last_example, tok, line, end_line, words, lines)
            else:
                last_example = None


def _closes(tok, lines: list[str], end_line: int) -> bool:
    """The fence's last line is a closing fence of its own kind: else the fence swallowed the rest of the page."""
    if end_line <= tok.map[0] + 1 or end_line > len(lines):
        return False
    m = _CLOSING.match(lines[end_line - 1])
    return bool(m) and m.group(1)[0] == tok.markup[0] and len(m.group(1)) >= len(tok.markup)


def _example(page: Page, tok, line: int, end_line: int, words: list[str], lines: list[str], kind: str) -> Example:
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    error = None
    try:
        options = parse_options(words, kind)
    except FenceError as exc:
        options, error = Options(raw=" ".join(words)), str(exc)
        page.problems.append(Problem(line, "HB060", str(exc)))
    code, filename, code_line, include = tok.content, page.rel, line + 1, None
    m = _INCLUDE.match(code.strip())
    if m:
        include = m.group(1)
        script = ROOT / include
        if script.is_file():
            try:
                code, filename, code_line = script.read_text(encoding="utf-8"), include, 1
            except UnicodeDecodeError as exc:
                error = f"included script {include} is not valid UTF-8 ({exc.reason} at byte {exc.start})"
                page.problems.append(Problem(line, "HB005", error))
        else:
            error = f"included script {include} does not exist"
            page.problems.append(Problem(line, "HB062", error))
    return Example(page.rel, line, end_line, indent, code, filename, code_line, options, include, error, kind=kind)


def _attach_output(page: Page, example: Example | None, tok, line, end_line, words, lines) -> None:
    try:
        header = parse_output_header(words)
    except FenceError as exc:
        page.problems.append(Problem(line, "HB061", str(exc)))
        return
    label = header.label
    block = OutputBlock(line, end_line, tok.content, header)
    if example is None or not _adjacent(lines, example.cuda_output or example.output or example, line):
        page.problems.append(Problem(line, "HB061", "output block does not directly follow a python block"))
    elif example.is_check:
        page.problems.append(
            Problem(
                line, "HB061", f"the check at {example.name} has no output block: a check asserts, it prints nothing"
            )
        )
    elif example.options.machine:
        page.problems.append(
            Problem(line, "HB064", f"{example.name} has machine=: its outputs live in the record, not on the page")
        )
    elif label == "" and example.output is None and example.cuda_output is None:
        example.output = block
    elif label == "cuda" and example.cuda_output is None:
        example.cuda_output = block
    else:
        page.problems.append(Problem(line, "HB061", f"extra output block for the example at {example.name}"))


def _adjacent(lines: list[str], previous, line: int) -> bool:
    """True when only blank lines stand between the previous fence's end and `line`."""
    return all(not lines[i].strip() for i in range(previous.end_line, line - 1))


def collect(paths: list[str] | None) -> list[Path]:
    """Markdown pages named by paths (files or folders); docs/ when none are given."""
    found: list[Path] = []
    for raw in paths or [str(DOCS)]:
        path = Path(raw)
        if not path.is_absolute():
            path = Path.cwd() / path
        if path.is_dir():
            found.extend(sorted(path.rglob("*.md")))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{raw}: no such file or folder")
    return found
