"""Migration maps (migration/*.yml): rows from NumPy, TensorFlow or Keras APIs to torch, rendered into pages.

A page shows a map with the marker `<!-- migration-map: numpy -->`. Rows are data; lint checks them (HB09x):
the schema, every torch name resolves in the installed torch, and every row that needs proof names an example
(`id=` on a python fence) on the page that shows the map. Which rows need one: every "defaults differ" and
"semantics differ" row, and for NumPy every row that claims equal results ("identical", "names differ").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jsonschema
import yaml

from handbook import DOCS, ROOT

MAPS = ROOT / "migration"
SCHEMA = Path(__file__).with_name("map.schema.json")
MARKER = re.compile(r"^<!--\s*migration-map:\s*([a-z0-9-]+)\s*-->\s*$")
CLASS_LABELS = {
    "identical": "identical",
    "names-differ": "only names differ",
    "defaults-differ": "defaults differ",
    "semantics-differ": "semantics differ",
    "composite": "composite",
    "no-equivalent": "no direct equivalent",
}


@dataclass
class Map:
    name: str
    path: Path
    data: dict
    row_lines: list[int]  # 1-based line of each row in the YAML file
    parse_error: tuple[int, str] | None = None

    @property
    def rows(self) -> list[dict]:
        return self.data.get("rows", []) if isinstance(self.data, dict) else []

    def needs_example(self, row: dict) -> bool:
        kind = row.get("class")
        equal_results = self.data.get("framework") == "NumPy" and kind in ("identical", "names-differ")
        return kind in ("defaults-differ", "semantics-differ") or equal_results


def load(path: Path) -> Map:
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return Map(path.stem, path, {}, [], ((mark.line + 1) if mark else 1, f"not valid YAML: {exc}".split("\n")[0]))
    lines: list[int] = []
    if node is not None:
        for key, value in getattr(node, "value", []):
            if getattr(key, "value", None) == "rows" and hasattr(value, "value"):
                lines = [item.start_mark.line + 1 for item in value.value]
    return Map(path.stem, path, yaml.safe_load(text) or {}, lines)


def load_all(folder: Path = MAPS) -> dict[str, Map]:
    return {p.stem: load(p) for p in sorted(folder.glob("*.yml"))} if folder.exists() else {}


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def schema_errors(m: Map) -> list[tuple[int, str]]:
    if m.parse_error:
        return [m.parse_error]
    out = []
    for error in _validator().iter_errors(m.data):
        path = list(error.path)
        line = m.row_lines[path[1]] if len(path) > 1 and path[0] == "rows" and path[1] < len(m.row_lines) else 1
        where = ".".join(str(p) for p in path) or "map"
        out.append((line, f"{where}: {error.message}"))
    return out


def markers(text: str) -> list[tuple[int, str]]:
    return [(n, m.group(1)) for n, line in enumerate(text.split("\n"), 1) if (m := MARKER.match(line.strip()))]


def page_for(api: str, docs: Path = DOCS) -> Path | None:
    path = docs / (api.lower().replace(".", "/") + ".md")
    return path if path.exists() else None


def _relative(target: Path, from_page: Path) -> str:
    import os

    return Path(os.path.relpath(target, from_page.parent)).as_posix()


def table(m: Map, page_path: Path, docs: Path = DOCS) -> list[str]:
    framework = m.data.get("framework", "Other")
    lines = [f"| {framework} | torch | difference | note |", "|---|---|---|---|"]
    for row in m.rows:
        cells = []
        for name in row.get("torch", []):
            target = page_for(name, docs)
            cells.append(f"[`{name}`]({_relative(target, page_path)})" if target else f"`{name}`")
        torch_cell = ", ".join(cells) or "—"
        if row.get("code"):
            torch_cell += f"<br>`{row['code']}`"
        note = row["note"].replace("|", "&#124;")
        if row.get("example"):
            note += f" [example](#ex-{row['example']})"
        lines.append(f"| `{row['other']}` | {torch_cell} | {CLASS_LABELS.get(row['class'], row['class'])} | {note} |")
    return lines


def expand(text: str, page_path: Path, maps: dict[str, Map], docs: Path = DOCS) -> str:
    """Replace each marker line with its map's table (unknown maps are left to lint: HB093)."""
    out = []
    for line in text.split("\n"):
        m = MARKER.match(line.strip())
        if m and m.group(1) in maps:
            out += table(maps[m.group(1)], page_path, docs)
        else:
            out.append(line)
    return "\n".join(out)


def search_words(text: str, maps: dict[str, Map]) -> list[str]:
    """The other framework's names shown on a page, so `tf.concat` finds the map that has it."""
    return [row["other"] for _, name in markers(text) if name in maps for row in maps[name].rows]
