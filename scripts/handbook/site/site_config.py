"""The site generator's configuration for the rendered folder, from the project's mkdocs.yml.

mkdocs.yml at the root holds what does not change between builds (theme, palette, plugins, Markdown extensions);
the render step writes, beside the rendered docs/, one complete configuration per generator with what it knows:
docs_dir and site_dir (relative to the build folder: Zensical panics on an absolute docs_dir and wants its site
inside), the navigation, the versions (copyright, extra.handbook), tags_allowed from tags/tags.yml, the offline
switch, and absolute paths for the theme overrides and snippets, so the build runs from any folder. MkDocs gets
the adapter as its one hook; Zensical runs no hooks and gets the classic look of mkdocs-material.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import re
import shutil
from pathlib import Path

import yaml

from handbook import ROOT

SOURCE = ROOT / "mkdocs.yml"
ADAPTER = ROOT / "scripts" / "handbook" / "site" / "mkdocs_hooks.py"
IFRAME_WORKER = "assets/vendor/iframe-worker/shim.js"
# Before the shim: MkDocs' offline search worker as a real (blob:) worker, the shim's iframe worker its fallback.
FILE_WORKER = "assets/javascripts/file-worker.js"
# generator -> its configuration in the build folder
GENERATORS = {"mkdocs": "mkdocs.yml", "zensical": "zensical.yml"}


# Overrides that only fit mkdocs-material 9's templates: Zensical's search is another component (a button that
# opens its own dialog), and material's search form in its place leaves Zensical's site without search.
MATERIAL_ONLY_OVERRIDES = ("partials/search.html",)


def overrides(generator: str, out: Path, source: Path) -> Path:
    """The theme's custom_dir for the generator: the project's overrides/, for Zensical a copy without the
    material-only partials (in the build folder)."""
    if generator == "mkdocs":
        return source
    target = out / "overrides-zensical"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(
        source,
        target,
        ignore=lambda folder, names: [
            n for n in names if (Path(folder) / n).relative_to(source).as_posix() in MATERIAL_ONLY_OVERRIDES
        ],
    )
    _bundle_of_zensical(target / "main.html")
    return target


_BUNDLE = re.compile(r"assets/javascripts/bundle\.[0-9a-f]+\.min\.js")


def _bundle_of_zensical(main: Path) -> None:
    """main.html loads the theme's bundle itself (deferred, so it names mkdocs-material's file): Zensical's is
    another file, named in its base.html."""
    if not main.exists() or not _BUNDLE.search(main.read_text(encoding="utf-8")):
        return
    spec = importlib.util.find_spec("zensical")
    base = Path(spec.origin).parent / "templates" / "base.html" if spec and spec.origin else None
    found = _BUNDLE.findall(base.read_text(encoding="utf-8")) if base and base.exists() else []
    if len(set(found)) != 1:
        raise ConfigError(f"{base}: expected one bundle.*.min.js in Zensical's base.html, found {sorted(set(found))}")
    main.write_text(_BUNDLE.sub(found[0], main.read_text(encoding="utf-8")), encoding="utf-8")


def site_dir(generator: str, out: Path, language: str = "en") -> Path:
    """MkDocs builds site/; Zensical wants its site inside its configuration's folder: build/site-zensical/. A
    translation's site is the folder named after its language inside the English one (site/zh/), so that the
    language switch is one relative link."""
    root = ROOT / "site" if generator == "mkdocs" else out / "site-zensical"
    return root if language == "en" else root / language


# The language switch in the header: each language's root, relative to the site's root; the template adds the page.
ALTERNATE = {"en": ("English", ""), "zh": ("中文", "zh/")}


class ConfigError(ValueError):
    pass


def load_source(path: Path = SOURCE) -> dict:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in ("nav", "hooks", "docs_dir", "site_dir", "copyright", "extra"):
        if key in config:
            raise ConfigError(
                f"{path}: '{key}' is written by the render step (handbook/site/site_config.py); remove it"
            )
    return config


def _plugins(config: dict) -> list:
    return [p if isinstance(p, dict) else {p: {}} for p in config.get("plugins", [])]


def _set_plugin(plugins: list, name: str, options: dict) -> None:
    for entry in plugins:
        if name in entry:
            entry[name] = {**(entry[name] or {}), **options}
            return
    plugins.append({name: options})


def _snippets_from_root(extensions: list) -> list:
    out = []
    for ext in extensions:
        if isinstance(ext, dict) and "pymdownx.snippets" in ext:
            options = dict(ext["pymdownx.snippets"] or {})
            options["base_path"] = [str((ROOT / p).resolve()) for p in options.get("base_path", ["."])]
            ext = {"pymdownx.snippets": options}
        out.append(ext)
    return out


def generate(
    generator: str,
    docs: Path,
    nav: list,
    env: dict,
    offline: bool,
    tag_ids: list[str],
    source: dict | None = None,
    language: str = "en",
) -> dict:
    config = copy.deepcopy(load_source() if source is None else source)
    # Relative to the configuration's folder (Zensical panics on an absolute docs_dir and wants its site inside).
    config["docs_dir"] = docs.name
    config["site_dir"] = os.path.relpath(site_dir(generator, docs.parent, language), docs.parent)
    config["nav"] = nav
    config["copyright"] = f"Examples verified against torch {env['torch']} · torchvision {env['torchvision']}"
    config["extra"] = {"handbook": {**env, "offline": offline}}
    # The language switch: the template (overrides/partials/alternate.html) links to the same page in the other one.
    here = "" if language == "en" else "../" * len(ALTERNATE[language][1].strip("/").split("/"))
    config["extra"]["alternate"] = [
        {"name": name, "link": here + root, "lang": code} for code, (name, root) in ALTERNATE.items()
    ]
    if language != "en":
        config.setdefault("theme", {})["language"] = language
        config["site_name"] = f"{config.get('site_name', '')} · 中文版" if language == "zh" else config["site_name"]
    if offline:  # the vendored shim, so the offline plugin does not add unpkg.com's
        config["extra"]["polyfills"] = [FILE_WORKER, IFRAME_WORKER] if generator == "mkdocs" else [IFRAME_WORKER]
    theme = config.setdefault("theme", {})
    custom = (ROOT / theme.get("custom_dir", "overrides")).resolve()
    theme["custom_dir"] = str(overrides(generator, docs.parent, custom))
    config["extra_css"] = [css for css in config.get("extra_css", []) if (docs / css).exists()]
    plugins = _plugins(config)
    _set_plugin(plugins, "tags", {"tags_allowed": list(tag_ids)})
    _set_plugin(plugins, "offline", {"enabled": offline})
    config["plugins"] = plugins
    config["markdown_extensions"] = _snippets_from_root(config.get("markdown_extensions", []))
    if generator == "mkdocs":
        config["hooks"] = [str(ADAPTER)]
    else:
        theme["variant"] = "classic"
    return config


def config_name(generator: str, language: str = "en") -> str:
    """mkdocs.yml, zensical.yml; a translation's: mkdocs-zh.yml."""
    return GENERATORS[generator] if language == "en" else GENERATORS[generator].replace(".yml", f"-{language}.yml")


def write(out: Path, generator: str, nav: list, env: dict, offline: bool, tag_ids: list[str], language="en") -> Path:
    suffix = "" if language == "en" else f"-{language}"
    config = generate(generator, out / f"docs{suffix}", nav, env, offline, tag_ids, language=language)
    path = out / config_name(generator, language)
    path.write_text(
        "# Written by `python -m handbook render` from mkdocs.yml: edit that file, not this one.\n"
        + yaml.safe_dump(config, allow_unicode=True, sort_keys=False, width=120),
        encoding="utf-8",
    )
    return path
