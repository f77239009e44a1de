"""Faults injected into Dask workers by the distributed-batch tests.

:class:`KillOnce` is a worker plugin: the first worker to start a chunk task
(``caspar-chunk-...``) while ``marker`` does not exist creates it and kills its own
process with SIGKILL -- a worker lost in the middle of a batch, once per marker, as a
crash or the nanny's memory limit would do it.  The nanny starts a new worker; the
scheduler runs the chunk again elsewhere.
"""

from __future__ import annotations

import os
import signal
from typing import final

from distributed.diagnostics.plugin import WorkerPlugin


@final
class KillOnce(WorkerPlugin):
    """Final.  See the module doc; ``name`` is the plugin's name on the cluster."""

    name = "caspar-kill-once"

    def __init__(self, marker: str):
        self.marker = marker

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or not str(key).startswith("caspar-chunk-"):
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, f"{key} {os.getpid()}\n".encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
