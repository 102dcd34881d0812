"""Resolve API names in the installed torch and read their real parameters."""

from __future__ import annotations

import importlib
import inspect
import re
from functools import lru_cache
from pathlib import Path

import yaml

PACKAGES = ("torch", "torchvision")  # the only modules a name is looked up in: a page must not make us import others


def resolve(name: str):
    """The object a dotted name refers to; LookupError when it does not exist in the installed torch/torchvision."""
    parts = name.split(".")
    if parts[0] not in PACKAGES:
        raise LookupError(f"{name} is not a torch or torchvision name (only those are looked up, nothing is imported)")
    if len(parts) > 1:
        # torchvision.ops.roi_align is both a module and the function that package exports: the name means the latter
        try:
            exported = getattr(importlib.import_module(".".join(parts[:-1])), parts[-1], None)
        except ImportError:
            exported = None
        if exported is not None and not inspect.ismodule(exported):
            return exported
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                raise LookupError(f"{name} does not exist ({'.'.join(parts[:cut])} has no {attr!r})") from None
        return obj
    raise LookupError(f"{name} does not exist (module {parts[0]!r} cannot be imported)")


def split_top_level(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current)
    return out


def _inside_parentheses(line: str) -> str:
    """What stands between the first '(' and its matching ')': the parameters, not the return annotation."""
    start = line.index("(")
    depth = 0
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start + 1 : i]
    return line[start + 1 :]


def _names_from_text(params: str) -> list[str]:
    names = []
    for part in split_top_level(params):
        part = part.strip().split("=")[0].split(":")[0].strip().lstrip("*").strip()
        if part and part not in ("/", "self") and part.isidentifier():
            names.append(part)
    return names


def docstring_signatures(obj) -> list[str]:
    """The `name(params) -> result` lines torch builtins put in their docstrings: the first, then one per overload.

    A bare `name(...)` line counts only at the top of the docstring; further down it is an example's output
    (`tensor([0, 1])`), and overloads are marked `.. function::` or `.. method::`.
    """
    short = getattr(obj, "__name__", "")
    doc = inspect.getdoc(obj) or ""
    # torch.linalg.norm is named linalg_norm but documented as linalg.norm(...)
    names = {short, short.replace("_", ".", 1)}
    if inspect.isclass(obj):
        names.add("__init__")  # torch.nn.RNN/LSTM/GRU document their constructor as `__init__(input_size,...)`
    name = "(?:" + "|".join(re.escape(n) for n in names) + ")"
    bare = re.compile(rf"^\s*({name}\(.*\)\s*(?:->.*)?)$")
    directive = re.compile(rf"^\s*\.\. (?:function|method):: ({name}\(.*\)\s*(?:->.*)?)$")
    found = []
    lines = doc.split("\n")
    if lines and re.match(rf"^\s*{name}\(", lines[0]) and lines[0].count("(") > lines[0].count(")"):
        # a signature wrapped over several lines (scaled_dot_product_attention): join until the parentheses close
        joined, k = lines[0], 1
        while joined.count("(") > joined.count(")") and k < len(lines):
            joined, k = joined + " " + lines[k].strip(), k + 1
        lines = [joined.rstrip(":")] + lines[k:]
    for n, line in enumerate(lines):
        m = directive.match(line) or (bare.match(line) if n < 3 else None)
        if m:
            found.append(m.group(1).strip())
    return found


OVERRIDES = Path(__file__).with_name("signatures.yml")


@lru_cache(maxsize=1)
def _overrides() -> dict[str, list[str]]:
    return yaml.safe_load(OVERRIDES.read_text(encoding="utf-8")) or {}


def parameters_of(name: str) -> list[str] | None:
    """Parameters of the API with this dotted name (signatures.yml fills in where torch states none)."""
    found = parameters(resolve(name))
    return _overrides().get(name) if found is None else found


def parameters(obj) -> list[str] | None:
    """Parameter names of the real signature, without self; None when no signature can be read. What is not
    called (a dtype, a constant, a Tensor attribute such as `ndim`) has none: []."""
    if not callable(obj):
        return []
    try:
        sig = inspect.signature(obj)
        params = [p for p in sig.parameters.values() if p.name != "self"]
        names = [p.name for p in params]
        kinds = {p.kind for p in params}
        generic = names and kinds <= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}
        if not generic:
            return names
    except (TypeError, ValueError):
        names = None
    lines = docstring_signatures(obj)
    if not lines:
        return names  # a truly generic (*args, **kwargs) signature, or None when none can be read
    names: list[str] = []
    for line in lines:
        for name in _names_from_text(_inside_parentheses(line)):
            if name not in names:
                names.append(name)
    if len(names) > 2 and {"args", "kwargs"} <= set(names):  # a generic (*args, **kwargs) line beside real overloads
        names = [n for n in names if n not in ("args", "kwargs")]
    return names


def signature_text(name: str) -> str | None:
    """The signature as the installed torch states it, for display."""
    try:
        obj = resolve(name)
    except LookupError:
        return None
    lines = docstring_signatures(obj)
    if lines:
        return "\n".join(lines)
    try:
        return f"{name.rsplit('.', 1)[-1]}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return None


_UNKNOWN = object()


class SourceText(str):
    """A default read from a docstring's signature line: Python source text, not the value."""


def defaults_of(name: str) -> dict[str, object]:
    """Each parameter's default as the installed torch states it, for the parameters whose default can be read:
    the value from inspect.signature, else the text of the docstring's signature lines ("0", "None", "'mean'"; a
    default that differs between overloads is left out)."""
    obj = resolve(name)
    found: dict[str, object] = {}
    try:
        for p in inspect.signature(obj).parameters.values():
            if p.default is not inspect.Parameter.empty:
                found[p.name] = p.default
    except (TypeError, ValueError):
        pass
    seen: dict[str, object] = {}
    for line in docstring_signatures(obj):
        for part in split_top_level(_inside_parentheses(line)):
            key, sep, value = part.partition("=")
            key = key.split(":")[0].strip().lstrip("*").strip()
            if sep and key.isidentifier():
                value = value.strip()
                seen[key] = value if seen.get(key, value) == value else _UNKNOWN
    for key, value in seen.items():
        if value is not _UNKNOWN:
            found.setdefault(key, SourceText(value))
    return {k: v for k, v in found.items() if " at 0x" not in repr(v)}
