"""Lint for unbacked content: prose a reader could test that no executed block backs.

Heuristics, measured on the real pages (see `python -m handbook claims` for the counts), strict enough to matter:

- HB100 a pitfall with no example or check under it;
- HB101 a pitfall example that neither raises, warns, prints an output the verifier compares, nor is followed in
  its pitfall by a check: an example that just succeeds shows no pitfall;
- HB102 a Parameters bullet whose stated default is not the one the installed torch's signature has;
- HB103 a Parameters bullet that states a raised error, a dtype rule, or "always/never/only/must/cannot" with no
  check inside the bullet and no example or check on the page passing that parameter by name;
- HB104 a sentence that states a speed or cost direction ("faster", "slower", "3x", "took longer") with no
  measured block in its section declaring the relation (`relation=`);
- HB105 an api page with fewer than 3 checks or check-bearing examples under Parameters and Common pitfalls.
"""

from __future__ import annotations

import ast
import re
import sys
import types
from collections import Counter

from handbook.lint import audit
from handbook.lint.signatures import SourceText, defaults_of
from handbook.verify.document import Example, Page, Prose, collect, parse_page

CODES = {
    "HB100": "a pitfall has no example or check under it (a prose-only pitfall)",
    "HB101": "a pitfall example just succeeds: it neither raises, warns, prints a compared output, nor has a check",
    "HB102": "a Parameters bullet states a default the real signature does not have",
    "HB103": "a Parameters bullet states an error, a dtype rule or an always/never/only with nothing that exercises it",
    "HB104": "a sentence states a speed direction with no measured block declaring it (relation=)",
    "HB105": "api page has fewer than 3 checks or check-bearing examples under Parameters and Common pitfalls",
}
MIN_CHECKS = 3

# "default `0`", "default: `None`", "defaults to `'mean'`" -- the value in the first backticks after the word.
_DEFAULT = re.compile(r"\bdefaults?(?: to|:)?\s+`([^`]+)`")
# What HB103 calls a testable rule. Type words only count outside the bullet's leading "(type, default ...)".
_RULE = re.compile(
    r"\b(raises?|raised|error|errors|warns?|warning|must|always|never|only|cannot|can't|not allowed|rejected|"
    r"promot\w+|dtype|float16|float32|float64|bfloat16|half|int64|int32|integer|long|bool)\b",
    re.I,
)
_LEAD = re.compile(r"^`\w+`\s*(\([^)]*\))?\s*[—–-]*\s*")
_SPEED = re.compile(
    r"\b(faster|slower|quicker|speeds? (?:it |things )?up|speed-?up|sped up|cheaper|more expensive|"
    r"takes? longer|took longer|less time|more time|outperforms?|\d+(?:\.\d+)?\s*(?:x|×)\s+(?:faster|slower|"
    r"quicker|the (?:time|speed|cost)))\b",
    re.I,
)
_MEASURED = ("nondeterministic", "machine")


def _measured(ex: Example) -> bool:
    return not ex.is_check and any(getattr(ex.options, k) for k in _MEASURED)


def _compared(ex: Example) -> bool:
    """The verifier compares something this example prints (an output block, not a sample)."""
    return ex.output is not None and not ex.options.nondeterministic


def check_bearing(ex: Example) -> bool:
    """A block whose run asserts something: a check, or an example that must raise, warn or print what is shown."""
    return ex.is_check or bool(ex.options.raises or ex.options.warns) or _compared(ex)


def _within(block: Prose, items: list) -> list:
    return [x for x in items if block.line <= x.line <= block.end_line]


def pitfalls(page: Page):
    for pitfall in page.pitfalls():
        blocks = _within(pitfall, page.examples)
        lead = pitfall.text.split("\n")[0][:60]
        if not blocks:
            yield pitfall.line, "HB100", f"pitfall {lead!r} has no example or check: show it failing or surprising"
            continue
        checked = any(b.is_check for b in blocks)
        for ex in blocks:
            if ex.is_check or checked or check_bearing(ex) or ex.options.skip:
                continue
            yield (
                ex.line,
                "HB101",
                f"pitfall example {ex.name} just succeeds: give it raises=/warns=, an output that shows the "
                "surprise, or a check after it",
            )


def _literal(text: str):
    """A default as written, as a value: literals, simple arithmetic (`1/3`), else the text."""
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if re.fullmatch(r"[\d.eE+\-*/() ]+", text):
        try:
            return eval(text, {"__builtins__": {}})  # noqa: S307 - digits and operators only
        except (SyntaxError, ZeroDivisionError, TypeError, ValueError):
            pass
    return text


def same_default(stated: str, real: object) -> bool:
    """The page's `default X` names the signature's default: equal values, an enum member by its name
    (`ReduceOp.SUM`, `NEAREST`), a module by its name (`pickle`), an object by its repr."""
    value = _literal(stated)
    if isinstance(real, SourceText):
        return stated == real or value == _literal(real)
    if isinstance(real, types.ModuleType):
        return stated == real.__name__
    if isinstance(real, str):
        return isinstance(value, str) and (value == real or value.split(".")[-1].lower() == real.lower())
    if isinstance(real, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return abs(value - real) <= 1e-12 * max(1.0, abs(real))
    name = getattr(real, "name", None)  # enum members, Python's and pybind11's
    if isinstance(name, str) and not isinstance(real, (int, float, tuple)):
        return stated.split(".")[-1] == name
    return value == real or stated == repr(real)


def parameter_claims(page: Page, api: str | None):
    bullets = page.bullets("Parameters")
    if not bullets:
        return
    try:
        real = defaults_of(api) if api else {}
    except Exception:  # noqa: BLE001 - HB030 reports an API that does not resolve
        real = {}
    code = "\n".join(e.code for e in page.examples)
    for bullet in bullets:
        m = re.match(r"^`(\w+)`", bullet.text)
        if not m:
            continue
        name = m.group(1)
        stated = _DEFAULT.search(bullet.text)
        if stated and name in real and not same_default(stated.group(1), real[name]):
            yield (
                bullet.line,
                "HB102",
                f"`{name}`: the page says default `{stated.group(1)}`, the signature of {api} has {real[name]!r}",
            )
        # the parameter's own name is no rule ("`dtype` — dtype of the parameters")
        rule = _RULE.search(re.sub(rf"\b{re.escape(name)}\b", "", _LEAD.sub("", bullet.text, count=1)))
        if rule is None:
            continue
        inside = any(e.is_check for e in _within(bullet, page.examples))
        by_name = re.search(rf"\b{re.escape(name)}\s*=(?!=)", code) is not None
        if not inside and not by_name:
            yield (
                bullet.line,
                "HB103",
                f"`{name}` states a rule ({rule.group(0)!r}) that nothing on the page exercises: add a check under "
                "the bullet, or pass it by name in an example",
            )


# What the official reference says, paraphrased, and the parameter list: "faster" there is rarely about speed
# ("reacts faster to a change of direction"); measured speed claims live in the other sections.
_NOT_SPEED_SECTIONS = ("Official definition", "Parameters")


def speed_claims(page: Page):
    for block in page.prose:
        if (block.kind == "item" and block.depth > 1) or page.section_of(block.line) in _NOT_SPEED_SECTIONS:
            continue
        m = _SPEED.search(block.text)
        if not m:
            continue
        section = page.section_of(block.line)
        measured = [e for e in page.examples if _measured(e) and page.section_of(e.line) == section]
        if block.kind == "item":
            measured = _within(block, measured) or measured
        if not any(e.options.relation for e in measured):
            where = "its measured block" if measured else "a measured block in its section"
            yield (
                block.line,
                "HB104",
                f"says {m.group(0)!r}: declare the direction on {where} (relation=), or do not state it",
            )


def enough_checks(page: Page):
    span = page.section("Parameters")
    found = [e for e in page.in_section("Parameters", page.examples) if e.is_check]
    found += [e for e in page.in_section("Common pitfalls", page.examples) if check_bearing(e)]
    if len(found) < MIN_CHECKS:
        yield (
            span[0] if span else 1,
            "HB105",
            f"{len(found)} check(s) or check-bearing examples under Parameters and Common pitfalls; at least "
            f"{MIN_CHECKS} back what the page claims",
        )


def findings(page: Page, api: str | None):
    """Every claim finding of one page (api pages; the speed rule applies to every page)."""
    if page.kind == "api":
        yield from pitfalls(page)
        yield from parameter_claims(page, api)
        yield from enough_checks(page)
    if page.kind in ("api", "guide", "comparison"):
        yield from speed_claims(page)


def main(paths: list[str] | None = None) -> int:
    """`python -m handbook claims`: every claim finding, audited page or not, and the audit's progress."""

    pages = [p for p in (parse_page(path) for path in collect(paths)) if not p.unreadable]
    codes: Counter = Counter()
    for page in pages:
        api = (page.front or {}).get("api") if page.kind == "api" else None
        for line, code, message in findings(page, api):
            codes[code] += 1
            print(f"{page.rel}:{line}: {code} {message}")
    done = audit.audited()
    checks = sum(e.is_check for p in pages for e in p.examples)
    print(
        f"claims: {sum(codes.values())} finding(s) ({', '.join(f'{c} {n}' for c, n in sorted(codes.items())) or 'none'}); "
        f"{checks} checks on {len(pages)} pages; audited {sum(p.rel in done for p in pages)} of {len(pages)}",
        file=sys.stderr,
    )
    return 1 if codes else 0
