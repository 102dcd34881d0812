"""One release's shard: what the installed torch says about every API the handbook documents.

Runs inside the environment of the release it probes (`python -m handbook versions shard`). For every api page:
whether its API exists, its parameters and defaults, the deprecation warnings accessing it emits; and every
example of the page run on CPU by the verifier: whether its output is the one the page shows, a hash of what it
printed, and why it failed when it did. Nothing here is typed by hand: it is what this torch did.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import warnings
from pathlib import Path

from handbook import DOCS
from handbook.lint.signatures import parameters, resolve
from handbook.verify import record
from handbook.verify.document import Page, parse_page

SHARD_VERSION = 1
DEPRECATIONS = (DeprecationWarning, FutureWarning)
OUTPUT_LIMIT = 3000  # characters kept of an output that differs from the page's (shown as before/after)
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_TEMP = re.compile(r"/tmp/[^\s'\"]+")
_WARNING_LINE = re.compile(r"^(DeprecationWarning|FutureWarning): (.+)$", re.M)


def digest(text: str) -> str:
    return hashlib.sha256(text.rstrip().encode()).hexdigest()[:12]


def api_pages(paths: list[Path] | None = None) -> list[Page]:
    found = paths if paths is not None else sorted(DOCS.rglob("*.md"))
    pages = [parse_page(p) for p in found]
    return [p for p in pages if p.kind == "api" and (p.front or {}).get("api")]


def _default(param: inspect.Parameter) -> str | None:
    if param.default is inspect.Parameter.empty:
        return None
    return _ADDRESS.sub("", repr(param.default))


def describe_api(name: str) -> dict:
    """Present or not; parameters with defaults (when the signature states them); warnings on access."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            obj = resolve(name)
        except LookupError as exc:
            broken = _import_failure(name)
            found = (
                {"present": False, "why": str(exc)}
                if broken is None
                else {"present": False, "importable": False, "why": broken}
            )
        except Exception as exc:  # noqa: BLE001 - importing a module of an old release can fail in any way
            found = {"present": False, "why": f"{type(exc).__name__}: {exc}"}
        else:
            found = {"present": True, **_signature(obj)}
    warned = _unique(
        {"category": w.category.__name__, "message": str(w.message), "on": "access"}
        for w in caught
        if issubclass(w.category, DEPRECATIONS)
    )
    if warned:
        found["warnings"] = warned
    return found


def _import_failure(name: str) -> str | None:
    """Why a module on the API's path exists in this release but cannot be imported (a dependency of its time
    missing, say); None when the path really ends at a missing name."""
    import importlib
    import importlib.util

    parts = name.split(".")
    for cut in range(2, len(parts) + 1):
        module = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module) is None:
                return None
        except (ImportError, ValueError):
            return None
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - any failure of an existing module
            return f"{module} exists but cannot be imported: {type(exc).__name__}: {exc}"
    return None


def _signature(obj) -> dict:
    try:
        sig = inspect.signature(obj)
        params = [p for p in sig.parameters.values() if p.name != "self"]
        kinds = {p.kind for p in params}
        if params and kinds <= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
            raise ValueError("generic signature")
        return {"parameters": [[p.name, _default(p)] for p in params], "defaults": True}
    except (TypeError, ValueError):
        names = parameters(obj)  # the docstring's signature lines: names, no defaults
        return {"parameters": [[n, None] for n in names], "defaults": False} if names is not None else {}


def _unique(items) -> list[dict]:
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _last_line(error: str) -> str:
    lines = [line for line in error.strip().split("\n") if line.strip()]
    return _TEMP.sub("<tmp>", lines[-1].strip() if lines else "")[:300]


_DEPRECATED = re.compile(r"deprecat|will be removed|has been removed|no longer supported", re.I)
_SITE = re.compile(r"^.*?/site-packages/")


def _origin(where: str) -> str:
    """`.../site-packages/torch/serialization.py:load` -> `torch/serialization.py:load` (the same on any machine)."""
    return _SITE.sub("", where)


def classify(outcome) -> dict:
    """One example's result in this release, as the version data keeps it."""
    ex = outcome.example
    found: dict = {"code": ex.code_hash, "expected": digest(ex.expected("cpu"))}
    actual = outcome.actual or ""
    if outcome.status == "skipped":
        return {**found, "status": "skipped", "why": outcome.reason}
    uncompared = ex.options.nondeterministic or ex.options.machine
    if outcome.status == "passed" or (uncompared and outcome.mismatch):
        # an uncompared block that did not raise ran; its sample being from another torch is not a change
        found["status"] = "ran" if uncompared else "same"
    elif outcome.mismatch and not outcome.detail.startswith("expected"):
        found.update(status="differs", output=digest(actual), actual=actual[:OUTPUT_LIMIT])
    else:
        found.update(status="failed", error=_last_line(outcome.detail or outcome.reason))
    # Every deprecation the example's calls emitted, with the function that emitted it (its origin), declared or
    # not: FutureWarning and DeprecationWarning, and UserWarnings whose text says deprecated or removed.
    warned = [
        {"category": w["category"], "message": str(w["message"]).strip(), "origin": _origin(w.get("origin", ""))}
        for w in getattr(outcome, "warnings", [])
        if w.get("category") in ("DeprecationWarning", "FutureWarning")
        or (w.get("category") == "UserWarning" and _DEPRECATED.search(str(w.get("message", ""))))
    ]
    if not warned:  # an older runner: the warning lines of the output and the failure
        lines = _WARNING_LINE.findall(actual) + _WARNING_LINE.findall(outcome.detail or "")
        warned = [{"category": c, "message": m.strip()} for c, m in lines]
    if warned:
        found["warnings"] = _unique(warned)
    return found


def shard(paths: list[Path] | None = None, jobs: int | None = None, reuse: dict | None = None) -> dict:
    """Probe this process's torch: the examples first (forked from a process that imported only what pages
    need), then every API's signature and warnings."""
    from handbook.verify.runner import verify

    pages = api_pages(paths)
    kept = {}
    if reuse:
        kept = {
            p.rel: reuse["pages"][p.rel]
            for p in pages
            if reuse.get("pages", {}).get(p.rel, {}).get("examples_hash") == p.examples_hash
        }
    to_run = [p for p in pages if p.rel not in kept]
    results: dict[str, list[dict]] = {p.rel: [] for p in to_run}
    if to_run:
        report = verify([str(p.path) for p in to_run], devices=("cpu",), jobs=jobs, use_cache=False, record_path=None)
        for outcome in report.outcomes:
            results[outcome.example.path].append(classify(outcome))
    out_pages = {}
    for page in pages:
        if page.rel in kept:
            out_pages[page.rel] = kept[page.rel]
            continue
        out_pages[page.rel] = {
            "api": page.front["api"],
            "examples_hash": page.examples_hash,
            "examples": results[page.rel],
        }
    apis = {name: describe_api(name) for name in sorted({p.front["api"] for p in pages})}
    env = record.environment()
    return {
        "shard": SHARD_VERSION,
        "release": env["torch"].split("+")[0],
        "environment": {**env, "numpy": _numpy_version()},
        "apis": apis,
        "pages": dict(sorted(out_pages.items())),
    }


def _numpy_version() -> str:
    try:
        import numpy

        return numpy.__version__
    except ImportError:
        return "not installed"
