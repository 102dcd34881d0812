"""Examples that run when a reader copies them: the `device` line the verifier's namespace provides, made visible.

The verifier runs every page with a `device` variable in its namespace (CPU pass: cpu, CUDA pass: cuda). A reader
who copies an example has no such variable, so the first block of a page that reads `device` shows the line that
defines it, right after the block's imports. On the verifier's passes that line evaluates to the device the pass
provides (the CPU pass hides the GPU), so the code shown is the code verified.
"""

from __future__ import annotations

import ast
import symtable

DEVICE_COMMENT = "# the handbook's device convention: the GPU when there is one"
DEVICE_LINES = {
    ("cpu", "cuda"): f'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  {DEVICE_COMMENT}',
    ("cpu",): 'device = torch.device("cpu")  # this example is verified on CPU only',
    ("cuda",): 'device = torch.device("cuda")  # this example needs a GPU',
}


def reads_undefined_device(code: str) -> bool:
    """True when the code reads a module-level name `device` that it never assigns."""
    try:
        top = symtable.symtable(code, "<example>", "exec")
    except SyntaxError:
        return False
    try:
        symbol = top.lookup("device")
    except KeyError:
        symbol = None
    if symbol is not None and (symbol.is_assigned() or symbol.is_imported()):
        return False
    if symbol is not None and symbol.is_referenced():
        return True
    pending = list(top.get_children())
    while pending:
        table = pending.pop()
        pending.extend(table.get_children())
        try:
            inner = table.lookup("device")
        except KeyError:
            continue
        if inner.is_global() and inner.is_referenced():
            return True
    return False


def setup_lines(code: str, devices: tuple[str, ...]) -> tuple[int, list[str]]:
    """Where to insert (number of code lines to skip: the leading imports) and the lines that define `device`."""
    tree = ast.parse(code)
    after, imports_torch = 0, False
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            break
        after = node.end_lineno or after
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" and not a.asname for a in node.names):
            imports_torch = True
    line = DEVICE_LINES.get(tuple(devices), DEVICE_LINES[("cpu", "cuda")])
    return after, ([] if imports_torch else ["import torch"]) + [line]
