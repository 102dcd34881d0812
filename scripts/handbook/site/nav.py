"""What the site shows beyond single pages: the module tree, module index pages, the Tags and Verification pages.

Independent of MkDocs: each function takes parsed pages (and the record, the tag vocabulary) and returns plain
data or Markdown. The render step (build.py) writes them as generated pages and the configurations' nav.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from handbook import DOCS
from handbook.lint import categories as category_vocabulary
from handbook.lint import tags as vocabulary
from handbook.verify import record as records
from handbook.verify.document import Page, parse_page


@dataclass
class Section:
    title: str
    modules: tuple[str, ...]  # API prefixes whose pages belong here
    index: str  # docs-relative path of the section's index page
    intro: str
    children: list[Section] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)


def module_tree() -> list[Section]:
    return [
        Section(
            "torch",
            ("torch",),
            "torch/index.md",
            "Tensor creation, shape operations, math, reductions and the other functions of the top-level package.",
            children=[
                # Not torch/tensor/index.md: that is torch/tensor/ as docs/torch/tensor.md (torch.tensor) is.
                Section(
                    "torch.Tensor", ("torch.Tensor",), "torch/tensor-methods/index.md", "Methods of tensor objects."
                ),
                Section("torch.linalg", ("torch.linalg",), "torch/linalg/index.md", "Linear algebra."),
                Section(
                    "torch.func",
                    ("torch.func",),
                    "torch/func/index.md",
                    "Function transforms: vmap, grad, jacobians, functional calls of modules.",
                ),
                Section(
                    "torch.distributions",
                    ("torch.distributions",),
                    "torch/distributions/index.md",
                    "Probability distributions: sampling, log-probabilities, reparameterization.",
                ),
            ],
        ),
        Section("torch.nn", ("torch.nn",), "torch/nn/index.md", "Modules: layers, containers, losses."),
        Section(
            "torch.nn.functional",
            ("torch.nn.functional",),
            "torch/nn/functional/index.md",
            "The stateless functions behind the layers.",
        ),
        Section("torch.optim", ("torch.optim",), "torch/optim/index.md", "Optimizers and learning-rate schedulers."),
        Section(
            "torch.utils.data", ("torch.utils.data",), "torch/utils/data/index.md", "Datasets, samplers and loaders."
        ),
        Section("torch.autograd", ("torch.autograd",), "torch/autograd/index.md", "Gradients and custom functions."),
        Section(
            "torch.cuda and torch.amp",
            ("torch.cuda", "torch.amp", "torch.backends", "torch.accelerator"),
            "torch/cuda/index.md",
            "GPU devices and memory, device-neutral accelerators, mixed precision, backend switches.",
        ),
        Section(
            "torch.distributed", ("torch.distributed",), "torch/distributed/index.md", "Training on several processes."
        ),
        Section("torchvision", ("torchvision",), "torchvision/index.md", "Images: transforms, datasets, models."),
    ]


KIND_SECTIONS = {"guide": ("Guides", "guides"), "comparison": ("Comparisons", "comparisons")}
MIGRATION = ("Coming from TensorFlow, Keras and NumPy", "migration")


def _flatten(sections: list[Section]) -> list[Section]:
    return [s for top in sections for s in (top, *_flatten(top.children))]


def sections_by_title(sections: list[Section]) -> dict[str, Section]:
    return {s.title: s for s in _flatten(sections)}


def place(sections: list[Section], api: str) -> Section | None:
    """The section with the longest module prefix that the API name starts with."""
    best, length = None, -1
    for section in _flatten(sections):
        for prefix in section.modules:
            if (api == prefix or api.startswith(prefix + ".")) and len(prefix) > length:
                best, length = section, len(prefix)
    return best


def load_pages(docs: Path = DOCS) -> list[Page]:
    return [parse_page(p) for p in sorted(docs.rglob("*.md"))]


def docs_path(page: Page, docs: Path = DOCS) -> str:
    return page.path.relative_to(docs.resolve()).as_posix()


@dataclass
class Site:
    sections: list[Section]
    guides: list[Page]
    comparisons: list[Page]
    migration: list[Page]
    other: list[Page]  # pages of no section (home, contributing, ...)


def organize(pages: list[Page], docs: Path = DOCS) -> Site:
    sections = module_tree()
    site = Site(sections, [], [], [], [])
    for page in pages:
        rel = docs_path(page, docs)
        api = page.front.get("api") if page.front else None
        if page.kind == "api" and isinstance(api, str) and place(sections, api):
            place(sections, api).pages.append(page)
        elif rel.startswith("migration/"):
            site.migration.append(page)
        elif page.kind in KIND_SECTIONS and rel.startswith(KIND_SECTIONS[page.kind][1] + "/"):
            (site.guides if page.kind == "guide" else site.comparisons).append(page)
        else:
            site.other.append(page)
    for section in _flatten(sections):
        section.pages.sort(key=lambda p: p.front["api"].lower())
    return site


UNCATEGORIZED = {"id": "", "en": "Other", "zh": "其他"}


def by_category(section: Section) -> list[tuple[dict, list[Page]]]:
    """The section's pages grouped by front-matter category, in the order tags/categories.yml lists them; pages
    without a known category come last, under "Other" (lint HB011 fails them)."""
    known = category_vocabulary.of_module(section.title)
    groups: dict[str, list[Page]] = {c["id"]: [] for c in known}
    rest: list[Page] = []
    for page in section.pages:
        groups.get((page.front or {}).get("category"), rest).append(page)
    out = [(c, groups[c["id"]]) for c in known if groups[c["id"]]]
    return out + ([(UNCATEGORIZED, rest)] if rest else [])


def title(page: Page) -> str:
    h1 = next((h.text for h in page.headings if h.level == 1), None)
    return (h1 or page.path.stem).strip("`")


def nav(site: Site, docs: Path = DOCS) -> list:
    """The MkDocs nav: module tree first, then guides, comparisons, migration, tags, status, contributing."""

    def section_nav(section: Section) -> dict:
        items: list = [section.index]
        items += [section_nav(child) for child in section.children]
        for category, pages in by_category(section):
            items.append({category["en"]: [{title(p): docs_path(p, docs)} for p in pages]})
        return {section.title: items}

    def flat(name: str, folder: str, pages: list[Page]) -> dict:
        return {name: [f"{folder}/index.md", *({title(p): docs_path(p, docs)} for p in pages)]}

    others = {docs_path(p, docs): p for p in site.other}
    head = [{"Home": "index.md"}] if "index.md" in others else []
    tail = [{"Contributing": "contributing.md"}] if "contributing.md" in others else []
    rest = [{title(p): rel} for rel, p in sorted(others.items()) if rel not in ("index.md", "contributing.md")]
    return [
        *head,
        *(section_nav(s) for s in site.sections),
        flat("Guides", "guides", site.guides),
        flat("Comparisons", "comparisons", site.comparisons),
        flat(MIGRATION[0], MIGRATION[1], site.migration),
        *rest,
        {"Tags": "tags.md"},
        {"Verification status": "verification.md"},
        {"Deprecations": "deprecations.md"},
        *tail,
    ]


def _link(page: Page, from_dir: str, docs: Path) -> str:
    target = Path(docs_path(page, docs))
    depth = len(Path(from_dir).parts)
    return "../" * depth + target.as_posix()


def _listing(pages: list[Page], from_dir: str, docs: Path, what: str) -> list[str]:
    if not pages:
        return [f"No {what} yet."]
    lines = ["| page | summary |", "|---|---|"]
    for p in pages:
        summary = (p.front or {}).get("summary", "")
        lines.append(f"| [{title(p)}]({_link(p, from_dir, docs)}) | {summary} |")
    return lines


def index_pages(site: Site, docs: Path = DOCS) -> dict[str, str]:
    """docs-relative path -> Markdown of every generated index page that docs/ does not provide itself."""
    out: dict[str, str] = {}
    for section in _flatten(site.sections):
        folder = str(Path(section.index).parent)
        lines = [f"# {section.title}", "", section.intro, ""]
        for child in section.children:
            lines += [f"- [{child.title}]({Path(child.index).relative_to(folder).as_posix()}) — {child.intro}"]
        if section.children:
            lines.append("")
        groups = by_category(section)
        if groups:
            lines += [f"{len(section.pages)} entries in {len(groups)} categories.", ""]
        for category, pages in groups:
            lines += [f"## {category['en']} · {category['zh']}", "", *_listing(pages, folder, docs, "entries"), ""]
        if not groups:
            lines += _listing(section.pages, folder, docs, "entries")
        out[section.index] = "\n".join(lines) + "\n"
    for (name, folder), pages in (
        (KIND_SECTIONS["guide"], site.guides),
        (KIND_SECTIONS["comparison"], site.comparisons),
        (MIGRATION, site.migration),
    ):
        out[f"{folder}/index.md"] = "\n".join([f"# {name}", "", *_listing(pages, folder, docs, "pages")]) + "\n"
    return {path: text for path, text in out.items() if not (docs / path).exists()}


def tags_page(pages: list[Page], docs: Path = DOCS) -> str:
    lines = [
        "# Tags",
        "",
        "Every tag of the handbook with its English and Chinese label, and the pages that carry it.",
        "",
        "| tag | English | 中文 | meaning | pages |",
        "|---|---|---|---|---|",
    ]
    for entry in vocabulary.load():
        tagged = [p for p in pages if entry["id"] in ((p.front or {}).get("tags") or [])]
        links = ", ".join(f"[{html.escape(title(p))}]({docs_path(p, docs)})" for p in tagged) or "—"
        lines.append(
            f'| <span id="tag-{entry["id"]}"></span>`{entry["id"]}` | {entry["en"]} | {entry["zh"]} '
            f"| {entry['description']} | {links} |"
        )
    return "\n".join([*lines, "", "## Pages by tag", "", "<!-- material/tags -->", ""])


def verification_page(pages: list[Page], record: dict, docs: Path = DOCS) -> str:
    from handbook.site.render import badge

    rows, machines = [], {}
    for page in pages:
        if not page.examples:
            continue
        states = {d: records.status(record, page.rel, d, page.examples_hash) for d in ("cpu", "cuda")}
        for device, (state, info) in states.items():
            for name in (info or {}).get("machines", []) if state == "verified" else []:
                machines.setdefault((device, name), 0)
                machines[device, name] += 1
        cells = [badge(d, *states[d]) for d in ("cpu", "cuda")]
        rows.append(f"| [{title(page)}]({docs_path(page, docs)}) | {cells[0]} | {cells[1]} |")
    lines = [
        "# Verification status",
        "",
        "Every page with examples, and what the verification record (`verification.json`, written only by the",
        "verifier) says about it on each device and machine. A page whose examples changed after its last run shows",
        "as stale; a page that failed on any machine shows as failed.",
        "",
        "| machine | device | pages verified |",
        "|---|---|---|",
        *(f"| {html.escape(name)} | {device.upper()} | {n} |" for (device, name), n in sorted(machines.items())),
        "",
        "| page | CPU | CUDA |",
        "|---|---|---|",
        *rows,
    ]
    if not machines:
        lines[6:9] = ["No page is verified on any machine yet.", ""]
    return "\n".join(lines) + "\n"
