"""`python -m handbook lint`: content rules, each finding `path:line: CODE message`.

Each check is a generator registered with @check; it yields (line, code, message). Codes are stable: tests/
has a failing fixture page for every one of them.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jsonschema

from handbook import EXAMPLES, ROOT
from handbook.i18n import catalog, glossary
from handbook.lint import audit, claims, introspection, version_tags
from handbook.lint import categories as category_vocabulary
from handbook.lint import maps as maps_module
from handbook.lint import tags as vocabulary
from handbook.lint.modules import ModuleTreeError, module_tree, place
from handbook.lint.signatures import parameters_of, resolve
from handbook.verify import record as records
from handbook.verify.document import Page, collect, parse_page, relpath

SCHEMA = Path(__file__).with_name("frontmatter.schema.json")
API_SECTIONS = ["Official definition", "Parameters", "Examples", "Common pitfalls", "Performance tips"]

CODES = {
    "HB001": "front matter is missing or is not valid YAML",
    "HB002": "front matter lacks a required key",
    "HB003": "front matter has a key the schema does not know",
    "HB004": "front matter value has the wrong type or form",
    "HB005": "file is not valid UTF-8",
    "HB006": "page is a symbolic link (or lies under one): not read, never written",
    "HB010": "tag is not in the vocabulary (tags/tags.yml)",
    "HB011": "api page has no category, or one its module does not list (tags/categories.yml)",
    "HB020": "the page's H1 is missing or is not the API name",
    "HB021": "api page sections are missing, extra or out of order",
    "HB030": "api does not resolve in the installed torch (or is not a torch/torchvision name)",
    "HB031": "a parameter is documented that the real signature does not have",
    "HB032": "a parameter of the real signature is not documented",
    "HB033": "the real signature of the api cannot be read",
    "HB034": "since: disagrees with the version data (versions/history.json)",
    "HB035": "tag 1.0-compatible or 2.0-new disagrees with the version data",
    "HB040": "api page has no example under Examples",
    "HB041": "api page has no example under Common pitfalls",
    "HB042": "comparison page has no side-by-side table",
    "HB043": "comparison page has no example",
    "HB050": "internal link points to a file that does not exist",
    "HB060": "fence line has an unknown or invalid option",
    "HB061": "output block is not directly after a python block, or is extra",
    "HB062": "included script does not exist",
    "HB063": "fence line holds a backtick, so Markdown does not treat it as a fence",
    "HB064": "a machine-dependent example (machine=) has an output block on the page",
    "HB065": "code fence is never closed, so it runs to the end of the page",
    "HB066": "a CUDA-only block has an output block, but no CUDA run of the page is recorded",
    "HB067": "example looks into the verifier (its modules, gc's object lists, frames, its pipes): it could fake "
    "its own verdict",
    "HB070": "related API does not resolve in the installed torch",
    "HB071": "api page is not at the path its API name gives",
    "HB080": "script in examples/ is not included by any page",
    "HB090": "migration map does not match its schema",
    "HB091": "migration map names a torch API that does not resolve",
    "HB092": "migration-map row needs an example on its page, and has none",
    "HB093": "page shows a migration map that does not exist",
    "HB094": "migration map is not shown by any page",
    **claims.CODES,
    "HB120": "a paragraph's Chinese translation is out of date: its English source changed since it was translated",
    "HB121": "a Chinese translation renders a glossary term (i18n/glossary.yml) another way than the glossary",
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message}"


Check = Callable[[Page], Iterator[tuple[int, str, str]]]
CHECKS: list[Check] = []


def check(fn: Check) -> Check:
    CHECKS.append(fn)
    return fn


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


@lru_cache(maxsize=256)
def _resolves(name: str) -> str | None:
    """None when the name resolves, else why not."""
    try:
        resolve(name)
    except LookupError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - importing arbitrary modules can fail in any way
        return f"{name} cannot be imported: {type(exc).__name__}: {exc}"
    return None


@check
def parse_problems(page: Page):
    for p in page.problems:
        yield p.line, p.code, p.message


@check
def front_matter_schema(page: Page):
    if page.front is None:
        return
    for error in sorted(_validator().iter_errors(page.front), key=lambda e: list(e.path)):
        key = error.path[0] if error.path else None
        line = page.front_lines.get(key, 1) if isinstance(key, str) else 1
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else error.message
            yield 1, "HB002", f"front matter lacks required key {missing!r}"
        elif error.validator == "additionalProperties":
            extra = sorted(set(page.front) - set(error.schema.get("properties", {})))
            for name in extra:
                yield page.front_lines.get(name, 1), "HB003", f"unknown front matter key {name!r}"
        elif error.validator == "not" and key is None:
            yield (
                page.front_lines.get("api", 1),
                "HB004",
                f"only api pages take 'api' and 'category' keys, not {page.kind} pages",
            )
        else:
            where = ".".join(str(p) for p in error.path) or "front matter"
            yield line, "HB004", f"{where}: {error.message}"


@check
def tags_in_vocabulary(page: Page):
    known = set(vocabulary.ids())
    tags = page.front.get("tags") if page.front else None
    if isinstance(tags, list):
        for tag in tags:
            if tag not in known:
                yield page.front_lines.get("tags", 1), "HB010", f"tag {tag!r} is not in tags/tags.yml"


def _api(page: Page) -> str | None:
    api = page.front.get("api") if page.front else None
    return api if page.kind == "api" and isinstance(api, str) else None


@check
def category_of_module(page: Page):
    api = _api(page)
    section = place(module_tree(), api) if api else None
    if section is None:
        return
    known = category_vocabulary.ids(section.title)
    category = page.front.get("category")
    listed = f"the categories of {section.title} are: {', '.join(known) or 'none yet'}"
    if category is None:
        yield page.front_lines.get("api", 1), "HB011", f"api page has no category ({listed})"
    elif category not in known:
        yield (
            page.front_lines.get("category", 1),
            "HB011",
            f"category {category!r} is not listed for {section.title} ({listed})",
        )


@check
def title(page: Page):
    h1 = [h for h in page.headings if h.level == 1]
    if not h1:
        yield 1, "HB020", "page has no H1 title"
    elif _api(page) and h1[0].text.strip("`") != _api(page):
        yield h1[0].line, "HB020", f"H1 must be the API name {_api(page)!r}, not {h1[0].text!r}"


@check
def api_sections(page: Page):
    if page.kind != "api":
        return
    h2 = [h for h in page.headings if h.level == 2]
    titles = [h.text for h in h2]
    if titles == API_SECTIONS:
        return
    first = h2[0].line if h2 else 1
    missing = [t for t in API_SECTIONS if t not in titles]
    if missing:
        yield first, "HB021", f"missing section(s): {', '.join(missing)}"
    for h in h2:
        if h.text not in API_SECTIONS:
            yield h.line, "HB021", f"unexpected section {h.text!r} (api pages have exactly: {', '.join(API_SECTIONS)})"
    present = [t for t in titles if t in API_SECTIONS]
    if present != [t for t in API_SECTIONS if t in present]:
        yield first, "HB021", f"sections out of order: {', '.join(present)}"


@check
def api_resolves_and_parameters(page: Page):
    api = _api(page)
    if not api:
        return
    problem = _resolves(api)
    if problem:
        yield page.front_lines.get("api", 1), "HB030", problem
        return
    real = parameters_of(api)
    if real is None:
        yield page.front_lines.get("api", 1), "HB033", f"cannot read the signature of {api}"
        return
    span = page.section("Parameters")
    if span is None:
        return
    lines = page.text.split("\n")
    documented: dict[str, int] = {}
    for n in range(span[0], span[1] - 1):
        m = re.match(r"^[-*] +\*{0,2}`([A-Za-z_]\w*)`", lines[n])
        if m:
            documented.setdefault(m.group(1), n + 1)
    for name, line in documented.items():
        if name not in real:
            yield line, "HB031", f"parameter {name!r} is not in the signature of {api} ({', '.join(real) or 'none'})"
    for name in real:
        if name not in documented:
            yield span[0], "HB032", f"parameter {name!r} of {api} is not documented under Parameters"


@check
def since_and_version_tags(page: Page):
    """`since:` and the version tags must say what the probe across torch releases measured."""
    api, data = _api(page), version_tags.load()
    found = (data or {}).get("apis", {}).get(api or "")
    if not found or not found.get("added"):
        return  # not probed yet: nothing to check against
    since = page.front.get("since")
    if isinstance(since, str) and since != found["added"]:  # a since of another type is HB004's
        yield (
            page.front_lines.get("since", 1),
            "HB034",
            (
                f"since: {since}, but the version data has {api} added in {found['added']} (delete the line: the version "
                "history on the page comes from the data)"
            ),
        )
    tags = page.front.get("tags") or []
    if not isinstance(tags, list):
        return
    wanted = version_tags.expected_tags(tags, found, data, api)
    line, oldest = page.front_lines.get("tags", 1), data["releases"][0]["release"]
    for tag in sorted(set(tags) - set(wanted)):
        why = (
            f"{api} is in torch {oldest} and the data shows no change since"
            if tag == "2.0-new"
            else (f"{api} was added in {found['added']}")
        )
        yield line, "HB035", f"tagged {tag}, but {why} (versions fix-front-matter sets it)"
    for tag in sorted(set(wanted) - set(tags)):
        yield line, "HB035", f"{api} was added in {found['added']}: tag it {tag} (versions fix-front-matter sets it)"


@check
def examples_present(page: Page):
    if page.kind == "api":
        for title_, code in (("Examples", "HB040"), ("Common pitfalls", "HB041")):
            span = page.section(title_)
            if span and not any(span[0] < e.line < span[1] for e in page.examples):
                yield span[0], code, f"no example under {title_}"
    elif page.kind == "comparison":
        has_table = any(line.lstrip().startswith("|") and "---" in line for line in page.text.split("\n"))
        if not has_table and not maps_module.markers(page.text):  # a migration map renders as a table
            yield 1, "HB042", "comparison page has no side-by-side table"
        if not page.examples:
            yield 1, "HB043", "comparison page has no example"


@check
def cuda_outputs_come_from_cuda_runs(page: Page):
    """Only a real CUDA run writes a CUDA-only block's output (verify --update on a GPU); before one is recorded for
    the page, such a block carries none and the page labels it "not run"."""
    cuda_only = [e for e in page.examples if e.options.devices == ("cuda",) and (e.output or e.cuda_output)]
    if cuda_only and not _record().get("pages", {}).get(page.rel, {}).get("cuda"):
        for ex in cuda_only:
            yield (
                ex.line,
                "HB066",
                f"{ex.name} runs on CUDA only and no CUDA run of this page is recorded: remove its output",
            )


@lru_cache(maxsize=1)
def _record() -> dict:
    return records.load()


@check
def translations_current(page: Page):
    """A translation made from English that has changed since: the page shows the English with a note until the
    paragraph is translated again (python -m handbook i18n status lists them all)."""
    for language in catalog.LANGUAGES:
        for unit in catalog.status(page, language).outdated or []:
            yield unit.line, "HB120", f"the {language} translation of this {unit.kind} is out of date (i18n/{language})"
        po = catalog.load(page, language)
        for entry in po or []:
            if entry.obsolete or not entry.msgstr or "fuzzy" in entry.flags:
                continue
            for term, wanted, variant in glossary.misused(entry.msgid, entry.msgstr):
                line = int(entry.occurrences[0][1]) if entry.occurrences else 1
                yield (
                    line,
                    "HB121",
                    f"'{term}' is {wanted} in this handbook, not {variant} ({catalog.po_path(page, language).name})",
                )


@check
def unbacked_claims(page: Page):
    """Prose a reader could test that no executed block backs (lint/claims.py)."""
    # Pages of docs/ are held to these codes once the claims audit has read them (audit/*.yml); until then
    # `python -m handbook claims` lists their findings.
    if not page.unreadable and (not page.rel.startswith("docs/") or page.rel in audit.audited()):
        yield from claims.findings(page, _api(page))


@check
def internal_links(page: Page):
    for link in page.links:
        target = link.target
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0].split("?")[0]
        resolved = (page.path.parent / path).resolve()
        if not resolved.exists():
            yield link.line, "HB050", f"link target {target!r} does not exist"


@check
def related_resolve(page: Page):
    related = page.front.get("related") if page.front else None
    if isinstance(related, list):
        for name in related:
            if isinstance(name, str) and _resolves(name):
                yield page.front_lines.get("related", 1), "HB070", f"related API {name!r}: {_resolves(name)}"


def expected_paths(api: str) -> tuple[str, ...]:
    """docs/-relative paths an API's page may have: its dotted name, lowercased. Where another API differs only
    in case (torch.Tensor, the class, and torch.tensor, the function), the capitalized one may instead take
    `-class` (or `-attribute`), so that both can have a page; a module of that name (torch.optim.adam beside
    torch.optim.Adam) has no page and clashes with nothing."""
    want = api.lower().replace(".", "/")
    parent, _, last = api.rpartition(".")
    twin = f"{parent}.{last.lower()}"
    if (
        last != last.lower()
        and twin != api
        and not _resolves(twin)
        and not inspect.ismodule(resolve(twin))
        and resolve(twin) is not resolve(api)
    ):
        suffix = "-class" if inspect.isclass(resolve(api)) else "-attribute"  # torch.Tensor.T beside Tensor.t
        return want + ".md", want + suffix + ".md"
    return (want + ".md",)


@check
def page_path(page: Page):
    api = _api(page)
    if api:
        wants = expected_paths(api)
        if not any(page.path.as_posix().endswith("/" + want) for want in wants):
            yield 1, "HB071", f"page for {api} must live at " + " or ".join(f"docs/{w}" for w in wants)


@check
def map_markers(page: Page):
    shown = maps_module.markers(page.text)
    known = maps_module.load_all(maps_module.MAPS) if shown else {}  # parsing every map is slow: only when needed
    for line, name in shown:
        if name not in known:
            yield line, "HB093", f"no migration map {name!r} in migration/ (known: {', '.join(known) or 'none'})"


@check
def looks_into_the_verifier(page: Page):
    for example in page.examples:
        for line, what in introspection.findings(example.code):
            where = example.line if example.include else example.code_line + line - 1
            yield where, "HB067", f"{what}: an example may fake its own verdict so; examples look at torch only"


def lint_maps(pages: list[Page], folder: Path = maps_module.MAPS) -> Iterator[Finding]:
    known = maps_module.load_all(folder)
    shown: dict[str, list[Page]] = {}
    for page in pages:
        for _, name in maps_module.markers(page.text):
            shown.setdefault(name, []).append(page)
    for name, m in known.items():
        where = relpath(m.path)
        for line, message in maps_module.schema_errors(m):
            yield Finding(where, line, "HB090", message)
        if name not in shown:
            yield Finding(where, 1, "HB094", f"no page shows this map (add <!-- migration-map: {name} --> to one)")
        ids = {e.options.id for p in shown.get(name, []) for e in p.examples if e.options.id}
        for row, line in zip(m.rows, m.row_lines + [1] * (len(m.rows) - len(m.row_lines)), strict=False):
            if not isinstance(row, dict):
                continue
            for api in row.get("torch") or []:
                if isinstance(api, str) and _resolves(api):
                    yield Finding(where, line, "HB091", f"{row.get('other')}: {_resolves(api)}")
            example = row.get("example")
            if m.needs_example(row) and not example:
                yield Finding(where, line, "HB092", f"{row.get('other')}: a {row.get('class')} row needs example=")
            elif example and name in shown and example not in ids:
                yield Finding(where, line, "HB092", f"{row.get('other')}: no example with id={example} on its page")


def orphan_scripts(pages: list[Page], examples_dir: Path = EXAMPLES) -> Iterator[Finding]:
    included = {(ROOT / e.include).resolve() for p in pages for e in p.examples if e.include}
    for script in sorted(examples_dir.rglob("*.py")) if examples_dir.exists() else []:
        if script.resolve() not in included:
            yield Finding(relpath(script), 1, "HB080", "script is not included by any page")


def lint_page(page: Page) -> list[Finding]:
    checks = [parse_problems] if page.unreadable else CHECKS
    found = [Finding(page.rel, line, code, msg) for fn in checks for line, code, msg in fn(page)]
    return sorted(set(found), key=lambda f: (f.line, f.code, f.message))


def lint(paths: list[str] | None = None, examples_dir: Path = EXAMPLES) -> list[Finding]:

    pages = [parse_page(p) for p in collect(paths)]
    findings = [f for page in pages for f in lint_page(page)]
    if paths is None:
        findings.extend(orphan_scripts(pages, examples_dir))
        findings.extend(lint_maps(pages))
    return findings


def main(paths: list[str] | None = None) -> int:
    try:
        findings = lint(paths)
    except (FileNotFoundError, vocabulary.VocabularyError, category_vocabulary.CategoryError, ModuleTreeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for finding in findings:
        print(finding)
    print(f"lint: {len(findings)} finding(s)" + ("" if findings else ", all pages clean"), file=sys.stderr)
    return 1 if findings else 0
