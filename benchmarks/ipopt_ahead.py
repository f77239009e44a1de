"""IPOPT's references of a benchmark run computed ahead, in worker processes.

The runner solves each case with IPOPT and then with caspar, one after the other; on a
GPU host with many cores the IPOPT solves (one thread each) can run at the same time in
other processes while the GPU solves the cases in order -- so that the largest PGLib
cases fit one run.  :class:`IpoptAhead` starts ``workers`` processes (``fork``: they
inherit the case list) that take the cases in order from a queue, build each model
themselves and run :func:`benchmarks.measure.ipopt_reference` on it (its own time limit
and result, as in the runner); :meth:`IpoptAhead.reference` waits for a case's answer.
IPOPT's times are then taken with ``workers`` solves sharing the host: the runner's table
says so (``--ipopt-workers``).
"""

from __future__ import annotations

import multiprocessing as mp


def _work(cases, todo, done, tol, max_iter, time_limit) -> None:
    from benchmarks.measure import error_text, ipopt_reference

    while True:
        k = todo.get()
        if k is None:
            return
        try:
            done.put((cases[k].name, "ok", ipopt_reference(cases[k].build(), tol, max_iter,
                                                           time_limit)))
        except BaseException as e:      # noqa: BLE001 - the runner reports the case's error
            done.put((cases[k].name, "error", error_text(e)))


class IpoptAhead:
    """Final.  IPOPT's answers for ``cases`` (the runner's Case objects), ``workers`` at a
    time, in the cases' order."""

    def __init__(self, cases, workers: int, tol: float, max_iter: int, time_limit: float):
        ctx = mp.get_context("fork")
        self._todo, self._done = ctx.Queue(), ctx.Queue()
        for k in range(len(cases)):
            self._todo.put(k)
        self._procs = [ctx.Process(target=_work, args=(list(cases), self._todo, self._done,
                                                       tol, max_iter, time_limit))
                       for _ in range(max(1, int(workers)))]
        for p in self._procs:
            self._todo.put(None)
            p.start()
        self._answers: dict = {}

    def reference(self, name: str):
        """:func:`~benchmarks.measure.ipopt_reference`'s answer for case ``name`` (waits
        for it); a worker's error is raised here as a RuntimeError."""
        while name not in self._answers:
            got_name, kind, value = self._done.get()
            self._answers[got_name] = (kind, value)
        kind, value = self._answers.pop(name)
        if kind != "ok":
            raise RuntimeError(f"IPOPT reference of {name}: {value}")
        return value

    def close(self) -> None:
        for p in self._procs:
            p.join(timeout=1.0)
            if p.is_alive():
                p.kill()
                p.join()
