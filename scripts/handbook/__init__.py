"""The handbook tool: parse pages, lint them, run their examples, record the results."""

from pathlib import Path

# The project root: the folder holding mkdocs.yml. Paths in reports are relative to it.
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
