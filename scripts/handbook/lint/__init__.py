"""Lint: the page rules with their stable codes, and the content data they check against (front-matter
schema, tag vocabulary, categories, migration maps, real signatures).
"""
