"""The fixture pin: entries of the fixtures (tree or rev), their framing, the
digest, the pin file and its drift.
"""
