"""Benchmarks: verifier isolation overhead, site build and search latency in Chromium, Lighthouse scores."""
