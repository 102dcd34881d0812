"""The render step (python -m handbook render): the folder a site generator only converts."""

import ast
import json
import os
from pathlib import Path

import pytest
import yaml

from handbook import ROOT
from handbook.site import build, site_config, zensical_adapter

FIXTURE_DOCS = Path(__file__).parent / "fixtures" / "site" / "docs"
GOLDEN = Path(__file__).parent / "fixtures" / "render"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("render")
    build.write(out, FIXTURE_DOCS)
    return out


def _nav_paths(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in _nav_paths(v)]
    return [p for item in nav for p in _nav_paths(item)]


def test_render_writes_every_page_and_the_generated_ones(rendered):
    docs = rendered / "docs"
    for source in FIXTURE_DOCS.rglob("*.md"):
        assert (docs / source.relative_to(FIXTURE_DOCS)).exists(), source
    for generated in ["tags.md", "verification.md", "deprecations.md", "torch/index.md", "torch/nn/index.md"]:
        assert (docs / generated).exists(), generated
    for name in site_config.GENERATORS.values():
        config = yaml.safe_load((rendered / name).read_text())
        missing = [p for p in _nav_paths(config["nav"]) if not (docs / p).exists()]
        assert not missing, f"{name}: nav names pages the render step did not write: {missing}"
        assert config["extra"]["handbook"]["torch"] and config["copyright"].startswith("Examples verified")
    assert yaml.safe_load((rendered / "mkdocs.yml").read_text())["hooks"] == [str(site_config.ADAPTER)]
    assert "hooks" not in yaml.safe_load((rendered / "zensical.yml").read_text())
    front = yaml.safe_load((docs / "verification.md").read_text().split("---")[1])
    assert front == {"search": {"exclude": True}}
    data = json.loads((rendered / "search-data.json").read_text())
    assert "tags/" in data["aliases"] and data["tags"]["tags/"]


def test_rendered_page_matches_its_golden_file(rendered):
    """The final Markdown of a fixture page (front matter, TL;DR, badges, CPU/CUDA tabs). Regenerate after a
    reviewed change with HANDBOOK_UPDATE_GOLDEN=1."""
    actual = (rendered / "docs" / "torch" / "tabs.md").read_text()
    golden = GOLDEN / "tabs.expected.md"
    if os.environ.get("HANDBOOK_UPDATE_GOLDEN"):
        golden.write_text(actual)
    assert actual == golden.read_text()


def test_page_urls_online_and_offline():
    assert [build.page_url(p) for p in ("index.md", "torch/cat.md", "torch/index.md")] == ["", "torch/cat/", "torch/"]
    assert build.page_url("torch/cat.md", directory_urls=False) == "torch/cat.html"


def test_two_pages_of_one_url_fail_the_render_naming_both(tmp_path):
    with pytest.raises(build.RenderError, match=r"a/index.md: its URL /a/ is also .*a.md's"):
        build.check_urls(["a.md", "a/index.md"], tmp_path)
    build.check_urls(["a.md", "a/b.md"], tmp_path)


def test_source_configuration_may_not_hold_what_the_render_step_writes(tmp_path):
    source = tmp_path / "mkdocs.yml"
    source.write_text("site_name: x\nnav: [index.md]\n")
    with pytest.raises(site_config.ConfigError, match=rf"{source}: 'nav' is written by the render step"):
        site_config.load_source(source)
    assert "nav" not in site_config.load_source()  # the project's own


def mkdocs_imports(root: Path, allowed: set[Path]) -> list[str]:
    """path:line of every import of mkdocs or material under root, outside the allowed files."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] in ("mkdocs", "material") for n in names):
                found.append(f"{path}:{node.lineno}")
    return found


def test_no_module_outside_the_mkdocs_adapter_imports_mkdocs(tmp_path):
    assert mkdocs_imports(ROOT / "scripts", {site_config.ADAPTER}) == []
    bad = tmp_path / "render.py"
    bad.write_text("import os\n\ndef f():\n    from material.plugins.tags.structure.tag import Tag\n")
    assert mkdocs_imports(tmp_path, set()) == [f"{bad}:4"]  # the check sees one nested in a function


def test_zensical_adapter_sets_the_search_languages_and_refuses_an_unknown_index(tmp_path):
    (tmp_path / "search.json").write_text(
        json.dumps({"config": {"lang": ["en"]}, "items": [{"text": "<p>a</p><pre><code>x = 1</code></pre>"}]})
    )
    zensical_adapter.patch_search(tmp_path, ["en", "zh"])
    index = json.loads((tmp_path / "search.json").read_text())
    assert index["config"]["lang"] == ["en", "zh"] and index["items"][0]["text"] == "<p>a</p> "
    (tmp_path / "search.json").write_text("[]")
    with pytest.raises(zensical_adapter.AdapterError, match="not the index Zensical"):
        zensical_adapter.patch_search(tmp_path, ["en"])
    assert zensical_adapter.search_languages() == ["en", "zh"]


def test_zensical_gets_the_overrides_without_material_only_parts(rendered):
    copy = rendered / "overrides-zensical"
    assert (copy / "main.html").exists() and not (copy / "partials" / "search.html").exists()
    main = (copy / "main.html").read_text()
    material_bundle = site_config._BUNDLE.search((ROOT / "overrides" / "main.html").read_text())
    if material_bundle:  # main.html loads the theme's bundle itself: Zensical's own file instead
        assert material_bundle.group() not in main and site_config._BUNDLE.search(main)
    config = yaml.safe_load((rendered / "zensical.yml").read_text())
    assert config["theme"]["custom_dir"] == str(copy) and config["theme"]["variant"] == "classic"
