"""The render step and the site: rendered Markdown (badges, definitions, outputs), generated pages, navigation,
search-index data, the offline copy and the link check; `mkdocs_hooks` is the only module that imports MkDocs.
"""
