"""The repeat gate: repeats, ballots, exit code, scorecard, freeze records,
unfreeze, shards.
"""
