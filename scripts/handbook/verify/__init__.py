"""Verification: parse pages into examples, lint-independent fence options, run each page in a sandboxed
child forked from a warm pool, compare outputs, update pages, keep the record and the result cache.
"""
