"""``ballot-guard split``: commit the oracle part of a mixed change alone.
"""
