"""The tool's modules import one way: no import cycle (function-local imports included, so none can hide one),
and the stages depend downwards only: verify <- i18n <- lint <- usage <- releases <- site <- bench <- cli."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from handbook import ROOT

PACKAGE = ROOT / "scripts" / "handbook"
# Lowest first: a module may import its own stage and the stages before it.
LAYERS = ("", "verify", "i18n", "lint", "usage", "releases", "site", "bench", "cli", "__main__")


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports, wherever the import statement is (module level or inside a
    function). `from a import b` counts as importing a.b when a.b is a module, else a."""
    top = root.name
    modules = {_module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                if (target == top or target.startswith(top + ".")) and target in modules and target != name:
                    graph[name].add(target)
        graph.setdefault(name, set())
    return dict(graph)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1] if len(parts) > 1 else "")


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} imports {b}" for a, targets in graph.items() for b in targets if _layer(b) > _layer(a))


def test_the_tool_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_stages_import_downwards_only():
    graph = import_graph()
    assert {m.split(".")[1] for m in graph if "." in m} <= set(LAYERS), "a new stage must be placed in LAYERS"
    assert upward_imports(graph) == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "handbook"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_cycle_hidden_in_a_function_local_import_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "lint/__init__.py": "",
            "lint/a.py": "from handbook.lint import b\n",
            "lint/b.py": "def later():\n    from handbook.lint.a import thing\n",
            "lint/c.py": "from . import a\n",
        },
    )
    assert cycles(import_graph(root)) == [["handbook.lint.a", "handbook.lint.b"]]


def test_an_upward_import_is_found(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "lint/__init__.py": "",
            "lint/rules.py": "def f():\n    from handbook.site import nav\n",
            "site/__init__.py": "",
            "site/nav.py": "from handbook.lint import rules\n",
        },
    )
    graph = import_graph(root)
    assert upward_imports(graph) == ["handbook.lint.rules imports handbook.site.nav"]
    assert cycles(graph) == [["handbook.lint.rules", "handbook.site.nav"]]
