"""Fence info strings: ```python raises=RuntimeError devices=cpu```, ```check``` and ```output cuda```.

Two block kinds run: an example (```python```), whose printed output is compared with the page's output block, and
a claim check (```check```), placed with the sentence it proves, which prints nothing and fails when an assertion
in it fails. Both run in the page's one namespace, in page order.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass

DEVICES = ("cpu", "cuda")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0  # an hour: longer is a mistake (inf, 1e308) and would hang the verifier
OPTION_NAMES = ("devices", "raises", "warns", "nondeterministic", "machine", "relation", "timeout", "skip", "id")
KINDS = {"python": "example", "check": "check"}  # fence language -> block kind
CHECK_OPTIONS = ("devices", "raises", "warns", "timeout", "skip", "id")  # a check prints nothing: no samples
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class FenceError(ValueError):
    """A fence line that cannot be understood."""


@dataclass(frozen=True)
class Options:
    devices: tuple[str, ...] = DEVICES
    raises: str | None = None
    warns: str | None = None
    nondeterministic: str | None = None
    machine: str | None = None  # why the output depends on the machine: recorded per machine class, not compared
    relation: str | None = None  # a timing block's claim, a Python expression asserted whenever it is measured
    timeout: float = DEFAULT_TIMEOUT
    skip: str | None = None
    id: str | None = None  # an anchor other content (migration-map rows) links to
    raw: str = ""


def split_info(info: str) -> tuple[str, list[str]]:
    """Language and the remaining words of a fence info string."""
    try:
        words = shlex.split(info)
    except ValueError as exc:
        raise FenceError(f"unreadable fence line {info!r}: {exc}") from exc
    if not words:
        return "", []
    return words[0], words[1:]


def parse_options(words: list[str], kind: str = "example") -> Options:
    values: dict[str, str] = {}
    known = CHECK_OPTIONS if kind == "check" else OPTION_NAMES
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise FenceError(f"fence option {word!r} needs a value (name=value)")
        if kind == "check" and key in OPTION_NAMES and key not in known:
            raise FenceError(f"a check takes no {key}= (it prints nothing and asserts; known: {', '.join(known)})")
        if key not in known:
            raise FenceError(f"unknown fence option {key!r} (known: {', '.join(known)})")
        if key in values:
            raise FenceError(f"fence option {key!r} given twice")
        if not value:
            raise FenceError(f"fence option {key!r} has an empty value")
        values[key] = value
    kwargs: dict = {"raw": " ".join(words)}
    if "devices" in values:
        devices = tuple(d.strip() for d in values["devices"].split(","))
        bad = [d for d in devices if d not in DEVICES]
        if bad or not devices:
            raise FenceError(f"devices must be cpu, cuda or cpu,cuda, not {values['devices']!r}")
        kwargs["devices"] = tuple(d for d in DEVICES if d in devices)
    for key in ("raises", "warns"):
        if key in values:
            if not _NAME.match(values[key]):
                raise FenceError(f"{key}= needs an exception class name, not {values[key]!r}")
            kwargs[key] = values[key]
    if "timeout" in values:
        try:
            timeout = float(values["timeout"])
        except ValueError:
            timeout = -1.0
        if not 0 < timeout <= MAX_TIMEOUT:  # also false for nan
            raise FenceError(
                f"timeout must be a positive number of seconds, at most {MAX_TIMEOUT:g}, not {values['timeout']!r}"
            )
        kwargs["timeout"] = timeout
    for key in ("nondeterministic", "machine", "skip"):
        if key in values:
            kwargs[key] = values[key]
    if "relation" in values:
        kwargs["relation"] = _relation(values["relation"], values)
    if "id" in values:
        if not _ID.match(values["id"]):
            raise FenceError(f"id= takes lowercase letters, digits and '-', not {values['id']!r}")
        kwargs["id"] = values["id"]
    uncompared = [k for k in ("nondeterministic", "machine") if k in kwargs]
    if "raises" in kwargs and uncompared:
        raise FenceError(f"raises= and {uncompared[0]}= cannot be combined")
    if len(uncompared) == 2:
        raise FenceError(
            "nondeterministic= and machine= cannot be combined (a machine= output is recorded per machine)"
        )
    return Options(**kwargs)


def _relation(expression: str, values: dict[str, str]) -> str:
    """relation= is what the prose says of a measurement: only a timing block (nondeterministic= or machine=) has
    one, and it must be one Python expression."""
    if "nondeterministic" not in values and "machine" not in values:
        raise FenceError("relation= belongs to a measured block (nondeterministic= or machine=)")
    try:
        ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise FenceError(f"relation= must be one Python expression, not {expression!r} ({exc.msg})") from exc
    return expression


@dataclass(frozen=True)
class OutputHeader:
    """```output [cuda] [sample="where and when" code=HASH]```: sample/code are written by the verifier only."""

    label: str = ""  # "" shared, "cuda" CUDA-only
    sample: str | None = None  # provenance of a nondeterministic sample: device, machine, torch, date
    code: str | None = None  # hash of the code the sample was measured with

    def fence_words(self) -> str:
        words = ["output"] + (["cuda"] if self.label else [])
        if self.sample is not None:
            words += [f'sample="{self.sample}"', f"code={self.code}"]
        return " ".join(words)


def parse_output_header(words: list[str]) -> OutputHeader:
    label, attrs = "", {}
    for word in words:
        key, sep, value = word.partition("=")
        if word == "cuda" and not label:
            label = "cuda"
        elif sep and key in ("sample", "code") and value and key not in attrs:
            attrs[key] = value
        else:
            raise FenceError(f"an output fence takes only 'cuda', sample= and code=, not {word!r}")
    if ("sample" in attrs) != ("code" in attrs):
        raise FenceError("sample= and code= come together (the verifier writes both)")
    return OutputHeader(label, attrs.get("sample"), attrs.get("code"))


def fence_for(text: str) -> str:
    """The shortest backtick fence that the text cannot close: longer than every run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)
