"""MkDocs hooks: render what the verifier recorded; generate tags_allowed from tags/tags.yml."""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority

from handbook import render, tags

_record: dict = {}


@event_priority(100)  # before the tags plugin reads tags_allowed in its own on_config
def on_config(config, **kwargs):
    from material.plugins.tags.structure.tag import Tag

    plugin = config.plugins.get("material/tags")
    if plugin is not None:
        plugin.config.tags_allowed = {Tag(t) for t in tags.ids()}
    return config


def on_pre_build(config, **kwargs):
    _record.clear()
    _record.update(render.load_record())


def on_page_markdown(markdown, page, config, **kwargs):
    source = Path(page.file.abs_src_path)
    return render.render(source.read_text(encoding="utf-8"), source, _record)
