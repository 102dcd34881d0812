"""The official definition of an API, read from the installed torch at build time, never copied by hand.

Runtime docstrings rather than static analysis: torch builds many docstrings at import (`add_docstr` for builtins
such as F.conv2d, `.format(...)` for nn.Conv2d), which static analysis cannot see. The RST that torch writes
(`:attr:`, `:func:`, `.. note::`, `.. math::`) is turned into Markdown; upstream examples are left out, since the
page's own examples are the verified ones.
"""

from __future__ import annotations

import inspect
import re

from handbook.i18n.strings import t
from handbook.lint.signatures import resolve, signature_text, split_top_level
from handbook.verify.record import environment

# The reference of the pinned releases, not /stable/: the page describes that release, and stable moves on.
UPSTREAM = "https://docs.pytorch.org/docs/{release}/generated/{api}.html"
UPSTREAM_VISION = "https://docs.pytorch.org/vision/{release}/generated/{api}.html"


def upstream(api: str) -> str:
    """The official reference of this API, for the installed (pinned) torch or torchvision release."""
    vision = api.startswith("torchvision.")
    version = environment()["torchvision" if vision else "torch"]
    release = ".".join(version.split("+")[0].split(".")[:2])
    return (UPSTREAM_VISION if vision else UPSTREAM).format(release=release, api=api)


_ROLE = re.compile(r":(?:py:)?(?:attr|func|class|meth|mod|obj|data|exc|ref|doc|const|any|term):`~?([^`]+)`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
# Math for pymdownx.arithmatex (generic mode, rendered by the vendored KaTeX): \( inline \) and \[ display \].
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_RST_LITERAL = re.compile(r"``([^`]+)``")
_DIRECTIVE = re.compile(r"^(\s*)\.\. ([\w-]+)::\s*(.*)$")
_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Keyword args|Keyword arguments|Kwargs|Returns|Return type|"
    r"Raises|Shape|Attributes|Variables|Example|Examples|Note|Notes|Warning|Warnings|"
    r"Example::|Examples::)\s*:?:?\s*$"
)
_PARAM_SECTIONS = {"Args", "Arguments", "Parameters", "Keyword args", "Keyword arguments", "Kwargs"}
_ITEM = re.compile(r"^\s*\*{0,2}([A-Za-z_]\w*)\*{0,2}\s*(\([^)]*\))?\s*:\s*(.*)$")
ADMONITIONS = {
    "note": "note",
    "warning": "warning",
    "seealso": "info",
    "deprecated": "warning",
    "versionadded": "info",
    "versionchanged": "info",
    "tip": "tip",
    "important": "warning",
    "caution": "warning",
}


def _inline(text: str) -> str:
    def role(m: re.Match) -> str:
        inner = m.group(1)
        label = re.match(r"(.*?)\s*<[^>]+>$", inner)  # :ref:`text <target>`
        return f"`{(label.group(1) if label else inner).strip()}`"

    maths: list[str] = []

    def math(m: re.Match) -> str:  # kept aside, so no Markdown rule below touches it
        maths.append(f"\\({m.group(1).strip()}\\)")
        return f"\x00{len(maths) - 1}\x00"

    text = _MATH_ROLE.sub(math, text)
    text = _ROLE.sub(role, text)
    text = re.sub(r"\.\. (note|warning)::\s*", lambda m: m.group(1).capitalize() + ": ", text)
    text = _RST_LITERAL.sub(r"`\1`", text)
    # Outside code spans, '<' would open raw HTML in Markdown.
    parts = text.split("`")
    text = "`".join(p.replace("<", "&lt;") if i % 2 == 0 else p for i, p in enumerate(parts))
    return re.sub("\x00(\\d+)\x00", lambda m: maths[int(m.group(1))], text)


def _table_cell(text: str) -> str:
    """A table cell: '|' ends a cell in Markdown, also inside math (where it becomes \\vert)."""
    text = _MATH.sub(lambda m: m.group(0).replace("|", "\\vert "), text)
    return text.replace("|", "&#124;")


def _dedent_block(lines: list[str], start: int, base: int) -> tuple[list[str], int]:
    """Lines indented deeper than `base` from `start` on (blank lines included); returns them and the next index."""
    block, i = [], start
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > base):
        block.append(lines[i])
        i += 1
    while block and not block[-1].strip():
        block.pop()
        i -= 1
    width = min((len(x) - len(x.lstrip()) for x in block if x.strip()), default=0)
    return [x[width:] for x in block], i


def _params_table(lines: list[str]) -> list[str]:
    rows: list[list[str]] = []
    for line in lines:
        m = _ITEM.match(line)
        if m and len(line) - len(line.lstrip()) == 0:
            kind = (m.group(2) or "").strip("()")
            rows.append([m.group(1), kind, m.group(3).strip()])
        elif rows and line.strip():
            rows[-1][2] += " " + line.strip()
    if not rows:
        return []
    out = ["| parameter | type | description |", "|---|---|---|"]
    out += [f"| `{n}` | {_table_cell(_inline(t))} | {_table_cell(_inline(d))} |" for n, t, d in rows]
    return out


def rst_to_markdown(doc: str) -> str:
    """Convert a torch docstring to Markdown: roles, directives, Google sections; examples dropped."""
    # A :math: role that wraps onto the next line: joined, so the line-by-line rules below see all of it.
    doc = re.sub(r":math:`[^`]*\n[^`]*`", lambda m: re.sub(r"\s*\n\s*", " ", m.group(0)), doc)
    lines = doc.expandtabs(4).split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        directive = _DIRECTIVE.match(line)
        section = _SECTION.match(stripped) if len(line) == len(line.lstrip()) else None
        if stripped.startswith(">>>"):
            # an upstream example: skip it and its printed output, up to the next blank line
            while i < len(lines) and lines[i].strip():
                i += 1
        elif stripped.endswith("::") and not directive and not section:
            # an RST literal block (Example::): shown upstream, left out here
            prose = stripped[:-2].rstrip()
            if prose and not re.match(r"^(Example|Examples)$", prose):
                out.append(_inline(prose) + ":")
            _, i = _dedent_block(lines, i + 1, len(line) - len(line.lstrip()))
        elif directive:
            indent, name, argument = directive.groups()
            body, i = _dedent_block(lines, i + 1, len(indent))
            if name in ADMONITIONS:
                title = {
                    "seealso": "See also",
                    "versionadded": f"Added in {argument}",
                    "versionchanged": f"Changed in {argument}",
                    "deprecated": f"Deprecated in {argument}",
                }.get(name, name.capitalize())
                text = rst_to_markdown(
                    "\n".join(([argument] if name in ("note", "warning") and argument else []) + body)
                )
                out += ["", f'!!! {ADMONITIONS[name]} "{title}"', ""]
                out += [f"    {x}" if x else "" for x in text.split("\n")] + [""]
            elif name == "math":  # display math for arithmatex: \[ on its own line, the formula, \]
                formula = [x for x in ([argument] if argument else []) + body if x.strip()]
                out += ["", "\\[", *formula, "\\]", ""]
            # other directives (code-block, testcode, include, _anchors) are upstream examples or markup: dropped
            continue
        elif section:
            name = section.group(1).rstrip(":")
            body, i = _dedent_block(lines, i + 1, 0)
            if name in ("Example", "Examples"):
                continue
            if name in _PARAM_SECTIONS:
                table = _params_table(body)
                out += [
                    "",
                    f"**{'Keyword arguments' if name.startswith(('Keyword', 'Kwargs')) else 'Parameters'}**",
                    "",
                    *table,
                    "",
                ]
            else:
                out += ["", f"**{name}**", "", *(_inline(x) for x in body), ""]
            continue
        elif stripped.startswith(".. ") or stripped.startswith(".. _"):
            i += 1
            continue
        else:
            out.append(_inline(line.rstrip()))
        i += 1
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


WRAP = 60  # a signature longer than this is shown one parameter per line, as the official reference does


def wrapped(line: str) -> list[str]:
    """A long signature one parameter per line (readable on a phone), a short one as it is."""
    if len(line) <= WRAP or "(" not in line:
        return [line]
    start = line.index("(")
    depth, end = 0, None
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(line[i], 0)
        if depth == 0:
            end = i
            break
    if end is None:
        return [line]
    params = [p.strip() for p in split_top_level(line[start + 1 : end]) if p.strip()]
    if len(params) < 2:
        return [line]
    return [line[: start + 1], *(f"    {p}," for p in params), line[end:]]


_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def official_markdown(api: str) -> list[str]:
    """Markdown lines: the signature, the converted docstring (collapsed), and the upstream link."""
    try:
        obj = resolve(api)
    except LookupError:
        return []
    lines = []
    sig = signature_text(api)
    if sig:
        sig = _ADDRESS.sub(">", sig)  # `<function relu at 0x7f...>`: a memory address would change every build
        shown = [x for line in sig.split("\n") for x in wrapped(line)]
        lines += [f'```python title="{t("Signature (from the installed torch)")}"', *shown, "```", ""]
    doc = inspect.getdoc(obj) or ""
    body = rst_to_markdown(doc)
    if sig:  # the docstring's own signature lines are shown above
        body = "\n".join(x for x in body.split("\n") if x.strip() not in sig.split("\n"))
    if body.strip():
        lines += [f'??? quote "{t("Official docstring (from the installed torch, examples left out)")}"', ""]
        lines += [f"    {x}" if x else "" for x in body.strip().split("\n")] + [""]
    lines += [f"{t('Upstream reference:')} [{api}]({upstream(api)})", ""]
    return lines
