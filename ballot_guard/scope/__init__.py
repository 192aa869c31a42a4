"""The scope rules: a change may not rewrite its own judge.  ``verdict`` holds
the records, ``judge`` runs the rules, ``report`` prints a verdict.
"""
