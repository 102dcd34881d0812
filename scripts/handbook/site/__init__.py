"""The render step and the site: rendered Markdown (badges, definitions, outputs), generated pages, navigation,
search-index data, the offline copy and the link check. `build` is the render step (`python -m handbook render`);
`mkdocs_hooks` (the only module that imports MkDocs) and `zensical_adapter` are the generators' adapters.
"""
