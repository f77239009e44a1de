"""A solver service: many threads submit single solves, a batcher answers them in batches.

``SolverService(problem, max_batch_size, max_wait, **options)`` owns a queue and
``workers`` background threads (default below).  Each request (the inputs of one
:meth:`Problem.solve <caspar_backend.problem.Problem.solve>`, no options) is recorded
when submitted -- a missing input is the model's value at that moment -- and checked
with the rest of its batch (:mod:`.request`: the submitting threads do no NumPy work);
it is answered through a :class:`concurrent.futures.Future` (an :class:`.answer.Answer`:
``Future``'s API and rules, lighter) that resolves to its
:class:`~caspar_backend.solver.result.SolveResult`.  A batch's futures are all resolved
before any of its waiting clients is woken, and the clients are woken one after another
(:mod:`.answer`: threads woken all at once only fight over the GIL).

Batching rule: a worker takes the oldest waiting request, arrived at time t_0, and
waits until ``min(max_batch_size, r)`` requests are waiting or the clock reaches
``t_0 + max_wait``, whichever comes first -- r the size of the batch taken last (at
first ``max_batch_size``); it then takes the oldest ``min(max_batch_size, waiting)``
requests, solves them with one ``problem.solve_batch(**stacked, **options)`` and
resolves their futures in request order.  So a lone request waits at most ``max_wait``
seconds before its solve starts (plus a running batch's time when every worker is
busy), under load the batches grow up to ``max_batch_size``, and clients that send
their next request as each answer comes (a closed loop: a controller, a planner) are
batched as soon as the last batch's clients are back instead of after the whole
``max_wait`` (64 clients on the 2-core VM: docs/batch.md).  Each answer is the request's ``problem.solve`` with the
service's options (``solve_batch``'s contract: same status and iterations, the same
solution up to round-off).

Workers: each worker solves one batch at a time, so up to ``workers`` batches run at
once.  On the CPU a batch's kernel calls already run on every core (Numba's threads,
:mod:`caspar_backend.compiled.batch_cpu`); a second worker would overlap one batch's
Python (checking, stacking, building the answers) with the other's kernel calls, but it
is one more thread contending for the GIL and it halves the batches: measured with 64
clients (docs/batch.md), one worker gave more solves per second and a lower p99 on 2
cores and on 16.  Default (``workers=None``, :func:`default_workers`): one, on the CPU
and on a GPU (where a batch is a single launch using the whole device).  A batch's CPU
kernel calls run on :func:`default_kernel_threads` threads (half the cores, at least two)
unless the options give ``threads``.  The batch size is governed by ``max_wait`` rather than
by the number of workers: an idle worker still waits for its oldest request's ``t_0 +
max_wait``.  On a many-core host the process's Python threads (clients and worker) answer
more requests kept on one core, with the kernel's threads on the others:
:func:`.placement.split_cores`, called once at the program's start.

Failure rules:

* bad input (wrong lengths, NaN bounds, lower > upper, non-finite x0 or p) fails only
  that request's future, with the error its single solve raises, when its batch is
  formed; it is never part of a ``solve_batch`` call;
* an exception raised by ``solve_batch`` (a bad option, a device error) fails the
  futures of that batch, each with that exception; the service keeps serving;
* a future cancelled by its client before its batch starts is left out of the batch.

Shutdown: ``close()`` (or leaving a ``with`` block normally) stops new submits
(:class:`ServiceClosedError`), answers every request already submitted, then returns;
``close(cancel_pending=True)`` cancels those not yet in a batch instead, and
``close(wait=False)`` does not wait for the running batch.  Leaving a ``with`` block by
an exception (Ctrl-C's KeyboardInterrupt included) is ``close(wait=False,
cancel_pending=True)``.  The workers are daemon threads and never hold a reference to
the service: a service dropped without ``close`` is closed by its finalizer (pending
requests cancelled), and at interpreter exit a still-open service is closed the same
way without waiting, so neither Ctrl-C nor exit hangs on a running batch.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, fields
from typing import NamedTuple

from ..errors import CasparError, OptionError
from .answer import Answer, settle
from .request import checked_batch, submitted


class ServiceClosedError(CasparError, RuntimeError):
    """A request was submitted to a :class:`SolverService` after ``close()``."""


@dataclass(frozen=True)
class ServiceStats:
    """Final.  Counts since the service started: ``submitted`` requests queued,
    ``rejected`` for bad input, ``answered`` with a result, ``failed`` by an
    exception of their batch, ``cancelled`` before their batch started; ``batches``
    ``solve_batch`` calls (successful or not), ``max_batch_size`` the largest;
    ``solve_seconds`` wall seconds inside ``solve_batch`` (summed over workers),
    ``wait_seconds`` the sum over batched requests of (batch start - submission)."""

    submitted: int = 0
    rejected: int = 0
    answered: int = 0
    failed: int = 0
    cancelled: int = 0
    batches: int = 0
    max_batch_size: int = 0
    solve_seconds: float = 0.0
    wait_seconds: float = 0.0

    @property
    def mean_batch_size(self) -> float:
        """Requests per ``solve_batch`` call (0.0 before the first)."""
        return (self.answered + self.failed) / self.batches if self.batches else 0.0

    @property
    def mean_wait(self) -> float:
        """Mean seconds a batched request waited in the queue (0.0 before the first)."""
        n = self.answered + self.failed
        return self.wait_seconds / n if n else 0.0


class _Pending(NamedTuple):
    """Final.  A queued request: its :class:`.request.Submitted` inputs, its future,
    its arrival (``time.monotonic()``)."""

    request: object
    future: Answer
    arrived: float


class _Queue:
    """Final.  The state the service shares with its workers: the waiting requests, the
    closed flag and the statistics, all guarded by one condition variable."""

    def __init__(self, problem, max_batch_size: int, max_wait: float, options: dict):
        self.problem = problem
        self.max_batch_size = max_batch_size
        self.max_wait = max_wait
        self.options = options
        self.cond = threading.Condition()
        self.items: deque = deque()
        self.closed = False
        self.counts = {f.name: f.default for f in fields(ServiceStats)}
        #: a batch closes early once this many requests wait: the size of the batch
        #: taken last (module doc), at first ``max_batch_size``
        self.returning = max_batch_size

    def count(self, **add) -> None:
        """Add to the statistics' fields (the caller holds ``cond``)."""
        c = self.counts
        for k, v in add.items():
            c[k] += v

    def stats(self) -> ServiceStats:
        """The statistics now (the caller holds ``cond``)."""
        return ServiceStats(**self.counts)

    def put(self, pending: _Pending) -> None:
        with self.cond:
            if self.closed:
                raise ServiceClosedError("the solver service is closed")
            self.items.append(pending)
            self.counts["submitted"] += 1
            # a worker waits either for a first request or for a full batch
            n = len(self.items)
            if n == 1 or n >= min(self.max_batch_size, self.returning):
                self.cond.notify()

    def take(self) -> list | None:
        """The next batch (the batching rule of the module doc), its futures marked
        running; None once the service is closed and nothing is left."""
        with self.cond:
            while True:
                while not self.items and not self.closed:
                    self.cond.wait()
                if not self.items:
                    return None
                deadline = self.items[0].arrived + self.max_wait
                full = min(self.max_batch_size, self.returning)
                # closed: answer what is queued without waiting for more
                while self.items and len(self.items) < full and not self.closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self.cond.wait(left)
                k = min(self.max_batch_size, len(self.items))
                self.returning = max(1, k)
                batch = [self.items.popleft() for _ in range(k)]
                if self.items:
                    self.cond.notify()   # the rest is another worker's (or ours, next)
                live = [b for b in batch if b.future.set_running_or_notify_cancel()]
                now = time.monotonic()
                self.count(cancelled=k - len(live),
                           wait_seconds=sum(now - b.arrived for b in live))
                if live:
                    return live

    def run(self, batch: list) -> None:
        """Check ``batch``, fail its bad requests, solve the others with one
        ``solve_batch`` call and resolve their futures."""
        try:
            kwargs, valid, errors = checked_batch(self.problem, [b.request for b in batch])
        except BaseException as exc:   # noqa: BLE001 - no future may be left unresolved
            kwargs, valid, errors = None, [], [(i, exc) for i in range(len(batch))]
        if errors:
            with self.cond:
                self.count(rejected=len(errors))
            for i, exc in errors:
                batch[i].future.set_exception(exc)
            if kwargs is None:
                return
            batch = [batch[i] for i in valid]
        t0 = time.perf_counter()
        try:
            res = self.problem.solve_batch(**kwargs, **self.options)
            if len(res) != len(batch):
                raise RuntimeError(f"solve_batch answered {len(res)} instances for a "
                                   f"batch of {len(batch)}")
            answers = list(res)
        except BaseException as exc:   # noqa: BLE001 - the batch's clients get it
            self._finish(len(batch), t0, failed=len(batch))
            settle([b.future for b in batch], exception=exc)
            return
        self._finish(len(batch), t0, answered=len(batch))
        settle([b.future for b in batch], answers)

    def _finish(self, size: int, t0: float, **add) -> None:
        with self.cond:
            self.count(batches=1, solve_seconds=time.perf_counter() - t0, **add)
            self.counts["max_batch_size"] = max(self.counts["max_batch_size"], size)

    def shutdown(self, cancel_pending: bool) -> None:
        """No more submits; with ``cancel_pending`` the queued requests are cancelled."""
        with self.cond:
            self.closed = True
            if cancel_pending:
                while self.items:
                    self.items.popleft().future.cancel()
                    self.count(cancelled=1)
            self.cond.notify_all()


def default_workers(device: str = "cpu") -> int:
    """The workers of a service on ``device`` (the module doc's rule): one, whatever the
    device (the argument is kept for callers that ask per device)."""
    return 1


def default_kernel_threads() -> int:
    """The threads a service's batch solves its CPU kernel calls on (``solve_batch``'s
    ``threads``) unless the options set them: half the cores this process may run on,
    at least two (or the one core there is).  A service's batches are small (tens of
    requests), and the clients' own Python needs the GIL between them: on the H200
    host's 16 cores (64 clients, IK, max_wait 2 ms; raw gpu_2026-12-05_session38)
    8 threads gave 11.0-11.4k solves/s with p99 9.0-9.1 ms, 4 threads 10.5-11.2k /
    8.6-8.9 ms, all 16 9.9k / 10.3 ms; on the 2-core VM both cores 12.9-13.2k / 5.6-6.5 ms,
    one core 8.5k / 49 ms.  After :func:`.placement.split_cores`: one per kernel core."""
    from ..compiled.cores import usable_cores
    from .placement import current_split

    split = current_split()
    if split is not None:
        return split.kernel_threads
    cores = usable_cores()
    return min(cores, max(2, cores // 2))


def _work(queue: _Queue) -> None:
    """A worker thread: batches until the queue is closed and empty."""
    while (batch := queue.take()) is not None:
        queue.run(batch)


#: solve_batch's own keywords among a service's options (the rest are the solver's)
_BATCH_KEYWORDS = frozenset({"device", "threads", "client", "chunk_size", "retries"})


def _check_options(options: dict) -> None:
    """The service's ``options`` checked as its batches will use them, at construction:
    an unknown solver option or a bad value (OptionError) and a device that is unknown or
    not usable here (DeviceError) are the caller's error now, not every request's."""
    from ..device import resolve_device
    from ..solver.options import resolved_options

    resolved_options({k: v for k, v in options.items() if k not in _BATCH_KEYWORDS})
    resolve_device(options.get("device", "cpu"))


class SolverService:
    """Final.  Concurrent single solves of one compiled problem, answered in batches
    (module doc).  ``max_batch_size`` >= 1 requests per batch, ``max_wait`` >= 0 seconds
    a batch's first request waits for company, ``workers`` >= 1 batches solved at once
    (None: :func:`default_workers`);
    ``options`` are ``solve_batch``'s (IPOPT's names, ``device``) for every request."""

    def __init__(self, problem, max_batch_size: int = 1024, max_wait: float = 0.002, *,
                 workers: int | None = None, **options):
        if not (isinstance(max_batch_size, int) and max_batch_size >= 1):
            raise OptionError(f"max_batch_size must be an integer >= 1, got "
                              f"{max_batch_size!r}")
        if not (isinstance(max_wait, (int, float)) and math.isfinite(max_wait)
                and max_wait >= 0):
            raise OptionError(f"max_wait must be a finite number of seconds >= 0, got "
                              f"{max_wait!r}")
        if workers is None:
            workers = default_workers(options.get("device", "cpu"))
        if not (isinstance(workers, int) and workers >= 1):
            raise OptionError(f"workers must be an integer >= 1, got {workers!r}")
        self.problem = problem
        options = dict(options)
        _check_options(options)
        if "threads" not in options and "client" not in options:
            options["threads"] = default_kernel_threads()
        self._queue = _Queue(problem, max_batch_size, float(max_wait), options)
        self._threads = [threading.Thread(target=_work, args=(self._queue,), daemon=True,
                                          name=f"caspar-service-{k}")
                         for k in range(workers)]
        for t in self._threads:
            t.start()
        # garbage collection or interpreter exit of an open service: cancel, never wait
        self._finalizer = weakref.finalize(self, self._queue.shutdown, True)

    @property
    def closed(self) -> bool:
        return self._queue.closed

    @property
    def stats(self) -> ServiceStats:
        """A snapshot of the statistics (:class:`ServiceStats`)."""
        with self._queue.cond:
            return self._queue.stats()

    def submit(self, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None, ubx=None,
               lbg=None, ubg=None) -> Answer:
        """Queue one solve; inputs as :meth:`Problem.solve`'s, a missing one the model's
        value now.  Returns a Future of its SolveResult; bad input fails it with the
        single solve's error (when its batch is formed).  Raises ServiceClosedError
        after :meth:`close`."""
        q = self._queue
        if q.closed:
            raise ServiceClosedError("the solver service is closed")
        fut = Answer()
        q.put(_Pending(submitted(self.problem, x0, p, lam_g0, lam_x0, lbx=lbx, ubx=ubx,
                                 lbg=lbg, ubg=ubg), fut, time.monotonic()))
        return fut

    def solve(self, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None, ubx=None,
              lbg=None, ubg=None, timeout: float | None = None):
        """:meth:`submit` and wait for the answer; raises the request's error.  After
        ``timeout`` seconds TimeoutError, and the request is withdrawn unless its batch
        has started (an interrupt while waiting withdraws it likewise)."""
        fut = self.submit(x0, p, lam_g0, lam_x0, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)
        try:
            return fut.result(timeout)
        except BaseException:
            fut.cancel()        # nobody will read the answer; no-op once it runs
            raise

    def close(self, wait: bool = True, cancel_pending: bool = False) -> None:
        """Stop accepting requests; answer the queued ones (or cancel them with
        ``cancel_pending``); with ``wait``, return when the workers are done.  Closing
        again does nothing more."""
        self._queue.shutdown(cancel_pending)
        if wait:
            me = threading.current_thread()
            for t in self._threads:
                if t is not me:    # close() from a future's callback in a worker
                    t.join()

    def __enter__(self) -> "SolverService":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.close(wait=False, cancel_pending=True)

    def __repr__(self) -> str:
        s = self.stats
        q = self._queue
        return (f"<caspar SolverService {'closed' if q.closed else 'open'} "
                f"max_batch_size={q.max_batch_size} max_wait={q.max_wait:g} "
                f"workers={len(self._threads)} batches={s.batches} "
                f"mean_batch_size={s.mean_batch_size:.1f}>")
