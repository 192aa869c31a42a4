"""The ``ci`` command and what it writes for GitHub Actions (workflow commands,
step summary, freeze patch).
"""
