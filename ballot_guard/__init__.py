"""ballot-guard: keep a patch from rewriting its own judge."""
from __future__ import annotations

__version__ = "0.1.0"
