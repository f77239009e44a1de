"""What a Dask worker runs for a distributed batch (:mod:`.distributed`): the problem's
arrival, the worker's device, and one chunk's solve.

A chunk is instances ``[start, stop)`` of the batch.  Its inputs travel as
:func:`chunk_rows` makes them -- per input ``None``, one shared vector (k,) when every
instance of the batch has the same row, or the chunk's rows (stop - start, k) -- and
the worker solves them with ``Problem.solve_batch``, the single-process code: an
instance's lockstep result does not depend on which other instances share its batch
(tests/batch/test_chunking.py), so the distributed result is the single-process one,
bit for bit, however the batch is cut.

Nothing here imports Dask at module level: :func:`solve_chunk` asks ``distributed`` for
the worker's address only when it runs on one.
"""

from __future__ import annotations

import pickle
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import final

import numpy as np

from ..device import gpu_problem, resolve_device
from .inputs import INPUT_NAMES
from .result import BatchResult


#: the problems this worker process has solved, by the SHA-256 of their pickle, least
#: recently used first: the copy a chunk brings is replaced by the one kept here, whose
#: evaluators are compiled.  Reason: Dask's memory manager drops the extra replicas of
#: the problem between batches, so a worker may receive it again, as a new object
_KEPT: OrderedDict = OrderedDict()
_KEPT_LOCK = threading.Lock()

#: how many problems a worker process keeps compiled
KEEP = 4


def load_problem(blob: bytes):
    """The :class:`~caspar_backend.problem.Problem` pickled in ``blob``.  A task of its
    own on the cluster, so that the scheduler can run it again (from the bytes it keeps
    in the task) when every worker that held the problem has died."""
    return pickle.loads(blob)


def kept(digest: str, problem):
    """This process's compiled copy of the problem ``digest`` (``problem`` itself the
    first time): one compilation per worker process and device."""
    with _KEPT_LOCK:
        problem = _KEPT.setdefault(digest, problem)
        _KEPT.move_to_end(digest)
        while len(_KEPT) > KEEP:
            _KEPT.popitem(last=False)
    return problem


def worker_device(device: str) -> str:
    """'cpu' or 'cuda' on this process for the option value ``device``:

    * ``'auto'``: 'cuda' when the whole GPU path is usable here (CuPy, a CUDA device,
      cuDSS for the instances that leave the batch), else 'cpu' -- the problem's size
      is not weighed, a chunk is many instances;
    * ``'cuda'``: 'cuda', or :class:`~caspar_backend.errors.DeviceError` saying what
      is missing;
    * ``'cpu'``: 'cpu'."""
    if device == "auto":
        return "cuda" if gpu_problem(solver=True) is None else "cpu"
    return resolve_device(device, solver=True)


def gpu_report(_=None) -> str | None:
    """``None`` when this process can solve on its GPU, else why not (what
    :func:`.distributed.solve_distributed` asks every worker for ``device='cuda'``)."""
    return gpu_problem(solver=True)


def chunk_rows(inp, start: int, stop: int) -> dict:
    """The inputs of instances ``[start, stop)`` of ``inp`` (a
    :class:`~.inputs.BatchInputs`) as :meth:`Problem.solve_batch` keywords: a row all
    instances share (a broadcast input: stride 0 along the batch) travels once, as a
    vector; the others as a C-contiguous (stop - start, k) copy."""
    out = {}
    for name in INPUT_NAMES:
        a = getattr(inp, name)
        if a is None:
            out[name] = None
        elif a.strides[0] == 0:
            out[name] = np.array(a[0])
        else:
            out[name] = np.ascontiguousarray(a[start:stop])
    return out


@final
@dataclass(frozen=True)
class ChunkResult:
    """Final.  One chunk's :class:`~.result.BatchResult` (its instances in order), the
    address of the worker that solved it, the device it used and the worker process's
    CPU seconds during the solve (all its threads: on a busy machine, wall seconds
    include waiting for a core, these do not)."""

    result: BatchResult
    worker: str
    device: str
    cpu_seconds: float


def solve_chunk(problem, digest: str, rows: dict, size: int, device: str,
                options: dict) -> ChunkResult:
    """Solve the ``size`` instances of ``rows`` (:func:`chunk_rows`) on this worker's
    device (:func:`worker_device`) with the single-process ``solve_batch`` of the
    problem (:func:`kept`: its compiled copy when this process has one)."""
    from distributed import get_worker

    problem = kept(digest, problem)
    dev = worker_device(device)
    cpu = time.process_time()
    res = problem.solve_batch(batch_size=size, device=dev, **rows, **options)
    return ChunkResult(res, get_worker().address, dev, time.process_time() - cpu)
