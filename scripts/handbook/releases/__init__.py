"""Releases: cached environments per torch release, the version-history probe and its merged data, and the
upgrade to a new release with its changes report.
"""
