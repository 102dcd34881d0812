"""What real code uses: per torch API, in how many files of a body of Python code (and notebooks) it appears.

Names are resolved through each file's imports (`import torch.nn as nn`, `from torch.utils.data import
DataLoader`, `import torchvision.transforms as T`), then to the API's canonical public name: aliases the installed
torch documents as such (`torch.concat` is "Alias for torch.cat") are folded into their target. A method called on
something that is not a module (`x.view(...)`, `optimizer.step()`) is attributed by its name and receiver: to
`torch.optim.Optimizer` when the receiver is named like an optimizer, `LRScheduler` like a scheduler, `GradScaler`
like a scaler, `torch.nn.Module` like a model, else to `torch.Tensor` when Tensor has that method (and it is not a
method of Python's own str, list, dict, set or tuple). Each API counts once per file.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOTS = ("torch", "torchvision")
_BUILTIN_METHODS = frozenset(
    name for t in (str, list, dict, set, tuple, bytes, int, float) for name in dir(t) if not name.startswith("_")
)
# receiver names -> the class whose method it is (first match wins); matched on the receiver's last name part
RECEIVERS = (
    (re.compile(r"(^|_)(optim|optimizer|opt)s?($|_)|optimi[sz]er", re.I), "torch.optim.Optimizer"),
    (re.compile(r"sched", re.I), "torch.optim.lr_scheduler.LRScheduler"),
    (re.compile(r"scaler", re.I), "torch.amp.GradScaler"),
    (re.compile(r"(^|_)(model|net|network|module|encoder|decoder|backbone|head|layer|classifier|generator|"
                r"discriminator)s?($|_)", re.I), "torch.nn.Module"),
)  # fmt: skip


@dataclass
class Scan:
    files: int = 0
    unparsable: list[str] = field(default_factory=list)
    uses: Counter = field(default_factory=Counter)  # api -> files using it


def python_sources(path: Path) -> list[tuple[str, str]]:
    """(name, source) of every Python file and notebook under path; a notebook is its code cells joined, with
    IPython magics and shell lines dropped."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in (".py", ".ipynb"))
    out = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if f.suffix == ".ipynb":
            try:
                cells = json.loads(text).get("cells", [])
            except (json.JSONDecodeError, AttributeError):
                out.append((str(f), "\0"))  # counted as unparsable
                continue
            code = ["".join(c.get("source", [])) if isinstance(c.get("source"), list) else c.get("source", "")
                    for c in cells if c.get("cell_type") == "code"]  # fmt: skip
            text = "\n".join(
                line for cell in code for line in cell.split("\n") if not line.lstrip().startswith(("%", "!"))
            )
        out.append((str(f), text))
    return out


def _imported_names(tree: ast.AST) -> set[str]:
    """Every name a file binds by an import (numpy as np, math, ...): attributes on them are never Tensor methods."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _import_aliases(tree: ast.AST) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ROOTS:
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ROOTS and not node.level:
            for a in node.names:
                if a.name != "*":
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _chain(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _receiver_name(node: ast.AST) -> str:
    """The last plain name of a method's receiver: `self.optimizer` -> optimizer, `opt[0]` -> opt."""
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def file_apis(source: str) -> set[str] | None:
    """The canonical torch APIs one file uses; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    aliases = _import_aliases(tree)
    if not aliases:
        return set()
    imported = _imported_names(tree)
    found: set[str] = set()
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(parents.get(node), ast.Attribute):
            chain = _chain(node)
            if chain and chain[0] in aliases:
                name = canonical(".".join([aliases[chain[0]], *chain[1:]]))
                if name:
                    found.add(name)
                continue
        if isinstance(node, ast.Attribute) and not isinstance(parents.get(node), ast.Attribute):
            chain = _chain(node)
            if chain and chain[0] in imported:
                continue  # np.sum, math.sqrt, a torch module attribute that does not resolve
            owner = method_owner(node.attr, _receiver_name(node.value))
            if owner:
                found.add(canonical(f"{owner}.{node.attr}") or f"{owner}.{node.attr}")
    return found


def method_owner(name: str, receiver: str) -> str | None:
    """Which class's method `receiver.name` is, by the receiver's name, else Tensor's when it has it."""
    if name.startswith("_"):
        return None
    for pattern, cls in RECEIVERS:
        if pattern.search(receiver) and _has(cls, name):
            return cls
    if name in _BUILTIN_METHODS or name in _AMBIGUOUS_ATTRIBUTES:
        return None
    return "torch.Tensor" if _has("torch.Tensor", name) else None


@cache
def _has(cls: str, name: str) -> bool:
    obj = _resolve(cls)
    return obj is not None and hasattr(obj, name)


@cache
def _resolve(dotted: str):
    from handbook.lint.signatures import resolve

    try:
        return resolve(dotted)
    except Exception:  # noqa: BLE001 - a name real code uses that this torch lacks, or that fails to import
        return None


@cache
def _alias_target(dotted: str) -> str | None:
    """What the installed torch documents this name as an alias of ("Alias for :func:`torch.cat`")."""
    obj = _resolve(dotted)
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str):
        return None
    m = re.search(r"Alias (?:for|of) :(?:func|meth|attr|class):`~?([\w.]+)`", doc[:400])
    if not m:
        return None
    target = m.group(1)
    if target.startswith("Tensor."):
        target = "torch." + target
    return target if _resolve(target) is not None else None


def _public(obj, name: str) -> str:
    """The shortest public name of the same object: torch.optim.optimizer.Optimizer is torch.optim.Optimizer,
    torch.long is torch.int64 (a dtype is named by what it prints)."""
    import torch

    if isinstance(obj, torch.dtype):
        return str(obj)
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "." in qualname:
        return name
    parts = module.split(".")
    for cut in range(1, len(parts) + 1):
        candidate = ".".join([*parts[:cut], qualname])
        private = any(p.startswith("_") for p in candidate.split("."))  # torch._C._nn.linear is F.linear
        if not private and candidate.split(".")[0] in ROOTS and _resolve(candidate) is obj:
            return candidate if len(candidate) < len(name) else name
    return name


# Attributes of a Tensor whose names mean something else far more often in real code (args.name, image.resize,
# config.mode, the .indices and .values of what max/topk/sort return): not attributed to Tensor by name alone.
_AMBIGUOUS_ATTRIBUTES = frozenset({"name", "names", "mode", "resize", "indices", "values"})


@cache
def canonical(dotted: str) -> str | None:
    """The public name real code's dotted name stands for; None when it is not a torch API (a module alone, or a
    name this torch lacks). The name is followed from the left through modules and classes only: `torch.__version__`
    stops at the string, `torch.float32.is_floating_point` at the dtype."""
    parts = dotted.split(".")
    obj, name = _resolve(parts[0]), parts[0]
    if obj is None:
        return None
    for part in parts[1:]:
        if not (inspect.ismodule(obj) or inspect.isclass(obj)):
            break
        nxt = _resolve(f"{name}.{part}")
        if nxt is None:
            break
        obj, name = nxt, f"{name}.{part}"
    if inspect.ismodule(obj):
        return None
    return _alias_target(name) or _public(obj, name)


def scan(paths: list[Path]) -> Scan:
    result = Scan()
    for path in paths:
        for name, source in python_sources(path):
            apis = file_apis(source)
            if apis is None:
                result.unparsable.append(name)
                continue
            result.files += 1
            result.uses.update(apis)
    return result
