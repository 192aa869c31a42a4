"""Which paths are the judge: built-in oracle files, patterns, the judge tables
of TOML files, links into the oracle, and the watches on them during a vote.
"""
