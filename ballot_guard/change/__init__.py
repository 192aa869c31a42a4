"""What a change touches and who made it: records read from git (the index, a
commit, a range, a merge's own paths) or from a patch file, and identities.
"""
