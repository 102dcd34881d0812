"""The claims audit record (audit/*.yml): which pages an expert has read and tried to falsify, with the counts.

A page in the record is held to the claim lint codes (HB100-HB105); `python -m handbook claims` reports them for
every page, audited or not, with the audit's progress.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jsonschema
import yaml

from handbook import ROOT

AUDIT = ROOT / "audit"
SCHEMA = Path(__file__).with_name("audit.schema.json")


class AuditError(ValueError):
    """An audit file that does not match its schema."""


def load(folder: Path = AUDIT) -> list[dict]:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    entries: list[dict] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.yml")) if folder.exists() else []:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
        if errors:
            where = "/".join(str(p) for p in errors[0].path)
            raise AuditError(f"{path.relative_to(ROOT)}: {where}: {errors[0].message}")
        for entry in data:
            if entry["page"] in seen:
                raise AuditError(f"{path.relative_to(ROOT)}: {entry['page']} is already in {seen[entry['page']].name}")
            seen[entry["page"]] = path
            entries.append(entry)
    return entries


@lru_cache(maxsize=1)
def audited() -> frozenset[str]:
    return frozenset(e["page"] for e in load())
