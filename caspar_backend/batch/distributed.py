"""Batches over a Dask cluster: ``Problem.solve_batch(..., client=client)``.

For B instances and a ``distributed.Client`` whose cluster has W workers:

1. the inputs and options are checked here, as without a client (bad ones raise before
   anything is sent); with ``device='cuda'`` every worker is asked whether it can solve
   on its GPU, and a :class:`~caspar_backend.errors.DeviceError` names those that
   cannot;
2. the problem is pickled once (:meth:`Problem.__getstate__
   <caspar_backend.problem.Problem.__getstate__>`: no compiled code) and sent as one
   task, ``caspar-problem-<sha256 of the bytes>-<token>`` (:func:`.chunk.load_problem`),
   held for as long as the Problem lives here (later batches of it on the same client
   pickle nothing again); each batch first copies it to every worker (the scheduler
   sends a task where its inputs are), and a worker process keeps its compiled copy by
   that digest (:func:`.chunk.kept`): one compilation per worker and device;
3. the batch is cut into chunks of ``chunk_size`` consecutive instances, by default

       chunk_size = max(min(B, MIN_CHUNK), ceil(B / (CHUNKS_PER_WORKER * W)))

   (one chunk per worker: :data:`CHUNKS_PER_WORKER` says why; a smaller ``chunk_size``
   gives Dask's work stealing something to even out and makes a lost worker cost less),
   and each chunk is one task ``caspar-chunk-<start>-<stop>-<token>``
   (:func:`.chunk.solve_chunk`) that solves it with the single-process
   :func:`~.solve.solve_batch` on the worker's device (:func:`.chunk.worker_device`:
   ``'auto'`` is the worker's GPU when it has a usable one, else its CPU);
4. each chunk's rows are placed at their instances as it finishes: the result is in
   input order and equals the single-process ``solve_batch`` bit for bit (an instance's
   lockstep result does not depend on its batch-mates: tests/batch/test_chunking.py).

Failures (docs/batch.md, "On a Dask cluster"), per chunk:

* the task raises (a DeviceError, a MemoryError or CuPy's OutOfMemoryError, a bug):
  Dask runs it again, ``retries`` times (default :data:`DEFAULT_RETRIES`), on a worker
  the scheduler picks;
* the worker dies while solving it (killed, crashed, stopped by its nanny's memory
  limit): the scheduler runs it again on another worker, up to
  ``distributed.scheduler.allowed-failures`` deaths (Dask's default 3), then the task
  fails with ``KilledWorker``;
* a chunk of more than one instance that still fails with a memory error is cut in two
  halves, each a new task under the same rules;
* otherwise its instances are given status ``'Insufficient_Memory'`` (a memory error)
  or ``'Unrecoverable_Exception'`` (anything else, ``KilledWorker`` included), path
  ``'failed'``, reason ``'<exception type>: <text>'``, NaN solutions and 0 iterations.

Every instance has its row and status; no chunk is dropped.  A ``KeyboardInterrupt``
(or a cancelled future) cancels the chunks still running and is raised.

``timings``: ``setup`` (here, until every chunk is submitted), ``lockstep`` and
``single`` (the chunks' own seconds, summed over chunks: worker seconds), ``total``
(wall clock).  ``extra``: ``worker`` and ``device`` (per instance: the worker address
and device that solved it, '' for a failed instance) and ``chunks`` (one dict per
chunk in input order: ``start``, ``stop``, ``worker``, ``device``, ``seconds`` (its
solve's wall clock on the worker), ``cpu_seconds`` (the worker process's CPU time
meanwhile), ``error``: '' or why it failed or was split).
"""

from __future__ import annotations

import hashlib
import math
import pickle
import time
import uuid
import weakref

import numpy as np

from ..errors import DeviceError, ModelError
from ..solver.options import resolve_options
from ..solver.status import STATUSES
from . import chunk
from .inputs import batch_inputs
from .result import BatchResult

#: chunks per worker by default: one.  A chunk pays a fixed cost -- the lockstep loop's
#: Python for every iteration up to its slowest instance's, whatever its size -- which
#: more chunks pay more often: the IK problem at B = 10^4 on one core takes 3.2 s as one
#: batch, 3.4 s as two chunks, 4.5 s as six and 8.3 s as 32 (0.17 to 0.26 s a chunk);
#: on a GPU a lockstep iteration costs about the same at any B up to 10^5, so a second
#: chunk per GPU costs a second run of every iteration
CHUNKS_PER_WORKER = 1

#: the smallest default chunk: below it the fixed cost outweighs the work that a second
#: worker would take (IK: 512 instances are about 0.15 s of work besides that cost)
MIN_CHUNK = 512

#: Dask's ``retries`` of a chunk whose task raised
DEFAULT_RETRIES = 1

#: the problem's task on each client, per Problem (weak: it goes with the Problem)
_SHIPPED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def solve_distributed(problem, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None,
                      ubx=None, lbg=None, ubg=None, batch_size=None, client,
                      chunk_size=None, retries=None, threads=None,
                      **options) -> BatchResult:
    """``solve_batch`` of ``problem`` over the workers of ``client`` (module doc);
    inputs and options those of :func:`~.solve.solve_batch` (``threads``: each
    worker's, for its chunks)."""
    t0 = time.perf_counter()
    check_client(client)
    inp = batch_inputs(problem, batch_size, x0=x0, p=p, lbx=lbx, ubx=ubx, lbg=lbg,
                       ubg=ubg, lam_g0=lam_g0, lam_x0=lam_x0)
    device = options.pop("device", "cpu")
    resolve_options(dict(options, device=device))
    # a stream is this process's; the workers' output goes to their own logs
    options.pop("stream", None)
    if threads is not None:
        options["threads"] = threads
    retries = DEFAULT_RETRIES if retries is None else _count("retries", retries, 0)
    size = None if chunk_size is None else _count("chunk_size", chunk_size, 1)
    B = inp.size
    if B == 0:
        # an empty batch: an empty result, as solve_batch gives without a cluster
        total = time.perf_counter() - t0
        return _Book(problem, 0).result(dict(setup=total, total=total))
    workers = _workers(client, device)
    if size is None:
        size = max(min(B, MIN_CHUNK), math.ceil(B / (CHUNKS_PER_WORKER * workers)))
    shipped, digest = _shipped(client, problem)
    # a copy on every worker first: the scheduler gives a task to a worker that holds
    # its inputs, so with the problem on one worker every chunk would queue there
    # (until work stealing moved them), and die with it
    client.replicate([shipped])

    def submit(start, stop):
        key = f"caspar-chunk-{start}-{stop}-{uuid.uuid4().hex[:12]}"
        return client.submit(chunk.solve_chunk, shipped, digest,
                             chunk.chunk_rows(inp, start, stop), stop - start, device,
                             options, key=key, retries=retries, pure=False)

    from distributed import as_completed

    book = _Book(problem, B)
    running = {}
    try:
        for start in range(0, B, size):
            stop = min(B, start + size)
            running[submit(start, stop)] = (start, stop)
        t_setup = time.perf_counter() - t0
        queue = as_completed(list(running))
        for fut in queue:
            start, stop = running.pop(fut)
            try:
                out = fut.result()
            except Exception as exc:        # the chunk's error after Dask's retries
                if _memory_error(exc) and stop - start > 1:
                    mid = (start + stop) // 2
                    for a, b in ((start, mid), (mid, stop)):
                        f = submit(a, b)
                        running[f] = (a, b)
                        queue.add(f)
                    book.note(start, stop, f"split in two after {_described(exc)}")
                else:
                    book.fail(start, stop, exc)
            else:
                book.put(start, stop, out)
            fut.release()
    finally:
        if running:
            client.cancel(list(running))
    return book.result(dict(setup=t_setup, total=time.perf_counter() - t0))


def check_client(client) -> None:
    from distributed import Client

    if not isinstance(client, Client):
        raise TypeError(f"client must be a dask.distributed.Client, got "
                        f"{type(client).__name__}")


def _count(name: str, value, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ModelError(f"solve_batch: {name} must be an integer >= {least}, got {value!r}")
    return int(value)


def _workers(client, device: str) -> int:
    """The number of workers now (at least 1: chunks wait for a worker as any Dask task
    does); for ``device='cuda'``, a DeviceError unless every worker can solve on its
    GPU (:func:`.chunk.gpu_report`)."""
    if device == "cuda":
        why = {w: r for w, r in client.run(chunk.gpu_report).items() if r is not None}
        if why:
            listed = "; ".join(f"{w}: {r}" for w, r in sorted(why.items()))
            raise DeviceError(f"device='cuda' requested but {len(why)} worker(s) cannot "
                              f"solve on a GPU ({listed}); use device='auto' (each worker "
                              f"its GPU, else its CPU) or start GPU workers only")
    return max(1, len(client.nthreads()))


def _shipped(client, problem):
    """``(future, digest)``: the task of ``problem`` on ``client``'s cluster and the
    SHA-256 of its pickle; one task per content, made once per Problem and client
    (module doc, step 2)."""
    held = _SHIPPED.setdefault(problem, {})
    fut, digest = held.get(client.id, (None, ""))
    if fut is None or fut.status in ("error", "cancelled", "lost"):
        try:
            blob = pickle.dumps(problem, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise ModelError(f"solve_batch: the problem cannot be sent to Dask workers, "
                             f"pickling it failed ({type(exc).__name__}: {exc})") from exc
        digest = hashlib.sha256(blob).hexdigest()
        # a key of its own: an erred task of the same key would answer again
        key = f"caspar-problem-{digest[:32]}-{uuid.uuid4().hex[:8]}"
        fut = client.submit(chunk.load_problem, blob, key=key)
        held[client.id] = (fut, digest)
    return fut, digest


def _memory_error(exc) -> bool:
    """A MemoryError, or an exception class named OutOfMemoryError (CuPy's, also when
    its class could not be rebuilt here)."""
    return any(c.__name__ in ("MemoryError", "OutOfMemoryError") for c in type(exc).__mro__)


def _described(exc) -> str:
    return f"{type(exc).__name__}: {exc}"


class _Book:
    """Final.  The batch's arrays as the chunks come back, in instance order."""

    def __init__(self, problem, B):
        n, m = problem.n, problem.m
        self.x, self.lam_x = np.full((B, n), np.nan), np.full((B, n), np.nan)
        self.g, self.lam_g = np.full((B, m), np.nan), np.full((B, m), np.nan)
        self.f = np.full(B, np.nan)
        self.iterations = np.zeros(B, np.int64)
        self.text = {k: np.full(B, "", dtype=object) for k in
                     ("status", "message", "path", "reason", "worker", "device")}
        self.chunks = []
        self.seconds = dict(lockstep=0.0, single=0.0)

    def put(self, start, stop, out) -> None:
        r, rows = out.result, slice(start, stop)
        for k in ("x", "f", "g", "lam_g", "lam_x", "iterations"):
            getattr(self, k)[rows] = getattr(r, k)
        for k in ("status", "message", "path", "reason"):
            self.text[k][rows] = getattr(r, k)
        self.text["worker"][rows], self.text["device"][rows] = out.worker, out.device
        for k in self.seconds:
            self.seconds[k] += r.timings.get(k, 0.0)
        self.chunks.append(dict(start=start, stop=stop, worker=out.worker, device=out.device,
                                seconds=r.timings.get("total", 0.0),
                                cpu_seconds=out.cpu_seconds, error=""))

    def fail(self, start, stop, exc) -> None:
        status = "Insufficient_Memory" if _memory_error(exc) else "Unrecoverable_Exception"
        why, rows = _described(exc), slice(start, stop)
        self.text["status"][rows] = status
        self.text["message"][rows] = (f"{STATUSES[status].exit_message} Instances "
                                      f"[{start}, {stop}) failed on the cluster: {why}")
        self.text["path"][rows], self.text["reason"][rows] = "failed", why
        self.note(start, stop, why)

    def note(self, start, stop, error: str) -> None:
        self.chunks.append(dict(start=start, stop=stop, worker="", device="", seconds=0.0,
                                cpu_seconds=0.0, error=error))

    def result(self, timings: dict) -> BatchResult:
        t = self.text
        extra = dict(worker=list(t["worker"]), device=list(t["device"]),
                     chunks=sorted(self.chunks, key=lambda c: (c["start"], -c["stop"])))
        return BatchResult(x=self.x, f=self.f, g=self.g, lam_g=self.lam_g, lam_x=self.lam_x,
                           status=list(t["status"]), iterations=self.iterations,
                           message=list(t["message"]), path=list(t["path"]),
                           reason=list(t["reason"]),
                           timings=dict(timings, **self.seconds), extra=extra)
