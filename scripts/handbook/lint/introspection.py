"""HB067: an example that looks into the verifier's runner instead of at torch.

The sandbox keeps a page from touching anything outside itself, and the warm process accepts one answer per
request; but an example runs in the same process as the runner that reports on it, so it can always find the
runner's pipes and its state and fake its own page's results. Doing so needs code no handbook example has a reason
to hold, and this check finds it: the tool's modules, the garbage collector's object lists, frames above the
example's own, and file descriptors other than 0-2 named by number or through /proc/self/fd.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

GC_LISTS = {"get_objects", "get_referrers", "get_referents"}
FRAME_GETTERS = {("sys", "_getframe"), ("sys", "_current_frames"), ("inspect", "currentframe")}
FRAME_GETTERS |= {("inspect", "stack"), ("inspect", "getouterframes"), ("inspect", "trace")}
FRAME_FIELDS = {"f_back", "f_locals", "f_globals"}
FD_CALLS = {"read", "write", "fdopen", "dup", "dup2", "close", "closerange", "fstat", "lseek", "pread", "pwrite"}
FD_PATHS = ("/proc/self/fd", "/dev/fd", "/proc/self/fdinfo")
TOOL = "handbook"
IMPORTERS = {"__import__", "importlib.import_module", "importlib.__import__"}


def findings(code: str) -> Iterator[tuple[int, str]]:
    """(line within `code`, what it does) for each place that looks into the verifier."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        what = _what(node)
        if what:
            yield node.lineno, what


def _what(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        if any(_is_tool(a.name) for a in node.names):
            return "imports the verifier's own modules"
    elif isinstance(node, ast.ImportFrom):
        if _is_tool(node.module or ""):
            return "imports the verifier's own modules"
        if node.module == "gc" and any(a.name in GC_LISTS for a in node.names):
            return "walks the garbage collector's lists of objects"
    elif isinstance(node, ast.Attribute):
        owner = node.value.id if isinstance(node.value, ast.Name) else None
        if owner == "gc" and node.attr in GC_LISTS:
            return "walks the garbage collector's lists of objects"
        if (owner, node.attr) in FRAME_GETTERS or node.attr in FRAME_FIELDS:
            return "reads frames above its own (the runner's)"
        if _is_sys_modules(node.value) and node.attr in ("items", "values", "keys"):
            return "lists the loaded modules (the verifier's among them)"
    elif isinstance(node, ast.Subscript) and _is_sys_modules(node.value):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and _is_tool(key.value):
            return "reaches the verifier's modules through sys.modules"
    elif isinstance(node, (ast.For, ast.comprehension)) and _is_sys_modules(node.iter):
        return "lists the loaded modules (the verifier's among them)"
    elif isinstance(node, ast.Call):
        func = node.func
        name = _dotted(func)
        first = node.args[0] if node.args else None
        named = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
        if name in IMPORTERS and named is not None and _is_tool(named):
            return "imports the verifier's own modules"
        if name == "sys.modules.get" and named is not None and _is_tool(named):
            return "reaches the verifier's modules through sys.modules"
        if name in ("getattr", "vars") and first is not None and _dotted(first) == "gc":
            return "walks the garbage collector's lists of objects"
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "os"
            and func.attr in FD_CALLS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, int)
            and node.args[0].value > 2
        ):
            return f"uses file descriptor {node.args[0].value}, which it did not open (the runner's pipes)"
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(FD_PATHS):
        return "lists its process's file descriptors (the runner's pipes among them)"
    return None


def _is_tool(module: str) -> bool:
    return module == TOOL or module.startswith(TOOL + ".")


def _dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a name or a chain of attributes, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _is_sys_modules(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )
