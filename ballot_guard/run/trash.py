"""A run's directory taken off the next run's path when it ends.

Each run has its own directory (TMPDIR, HOME, bytecode, log, result).  Removing
it file by file takes milliseconds a run (more on an overlay filesystem), and
the next run waited for it.  Instead it is renamed, in one step, into a
``trash`` directory that no run can list (mode ``0o300``: the gate writes
there, nobody reads), under a name nobody can guess, and removed there by one
background thread; ``close`` waits for it and removes the trash itself.  So the
next run never finds the last one's files where they were, nor by name.
"""
from __future__ import annotations

import os
import queue
import threading

from ballot_guard.scratch import remove_tree

_STOP = ""


class Trash:
    """Put run directories out of the way now; remove them in the background."""

    def __init__(self, parent: str) -> None:
        self.path = os.path.join(parent, "trash")
        self.queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def put(self, path: str) -> None:
        """Take ``path`` away at once (removed in place if it cannot be moved)."""
        with self.lock:
            try:
                if self.thread is None:
                    os.mkdir(self.path, 0o300)
                    self.thread = threading.Thread(target=self._empty, daemon=True)
                    self.thread.start()
                hidden = os.path.join(self.path, os.urandom(16).hex())
                os.rename(path, hidden)
            except OSError:
                remove_tree(path)
                return
        self.queue.put(hidden)

    def _empty(self) -> None:
        while (path := self.queue.get()) != _STOP:
            remove_tree(path)

    def close(self) -> None:
        """Wait until everything put here is removed, then remove the trash."""
        with self.lock:
            thread, self.thread = self.thread, None
        if thread is not None:
            self.queue.put(_STOP)
            thread.join()
            remove_tree(self.path)  # its mode (0o300) put back first
