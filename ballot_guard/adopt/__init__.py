"""Adoption: ``init`` and ``doctor``.
"""
