"""Resolve API names in the installed torch and read their real parameters."""

from __future__ import annotations

import importlib
import inspect
import re


def resolve(name: str):
    """The object a dotted name refers to; LookupError when it does not exist in the installed packages."""
    parts = name.split(".")
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


def _split_top_level(text: str) -> list[str]:
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


def _names_from_text(params: str) -> list[str]:
    names = []
    for part in _split_top_level(params):
        part = part.strip().split("=")[0].split(":")[0].strip().lstrip("*").strip()
        if part and part not in ("/", "self") and part.isidentifier():
            names.append(part)
    return names


def docstring_signature(obj) -> str | None:
    """The `name(params) -> result` line that torch builtins put at the start of their docstring."""
    short = getattr(obj, "__name__", "")
    doc = inspect.getdoc(obj) or ""
    for line in doc.split("\n")[:3]:
        m = re.match(rf"^\s*{re.escape(short)}\((.*)\)\s*(->.*)?$", line)
        if m:
            return line.strip()
    return None


def parameters(obj) -> list[str] | None:
    """Parameter names of the real signature, without self; None when no signature can be read."""
    try:
        sig = inspect.signature(obj)
        names = [p.name for p in sig.parameters.values() if p.name != "self"]
        kinds = {p.kind for p in sig.parameters.values()}
        generic = names and kinds <= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}
        if not generic:
            return names
    except (TypeError, ValueError):
        pass
    line = docstring_signature(obj)
    if line is None:
        return None
    params = line[line.index("(") + 1 : line.rindex(")")]
    return _names_from_text(params)


def signature_text(name: str) -> str | None:
    """The signature as the installed torch states it, for display."""
    try:
        obj = resolve(name)
    except LookupError:
        return None
    line = docstring_signature(obj)
    if line:
        return line
    try:
        return f"{name.rsplit('.', 1)[-1]}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return None
