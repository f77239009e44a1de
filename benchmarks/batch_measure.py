"""Measurements of the batched-solve benchmark (``benchmarks/bench_batch.py``).

A :class:`Workload` is one parametric problem and B parameter vectors (one instance per
row); each ``measure_*`` function solves all B instances one way and returns an
:class:`Outcome` -- per instance the status, the iteration count and the objective, plus
the wall seconds of the whole set:

* :func:`caspar_batch` -- one ``Problem.solve_batch`` call;
* :func:`caspar_single` -- ``Problem.solve`` once per instance, in a loop;
* :func:`ipopt_sequential` -- IPOPT (casadi wheel, ``nlpsol('ipopt')`` built once and
  called once untimed, as caspar's first batch is) called once per instance, in a loop;
* :func:`casadi_map` -- that nlpsol's ``map(B, 'thread', threads)`` called once, in a
  forked child process (a crash of IPOPT in threads is recorded, not fatal); the map
  returns objectives only, so statuses and iterations stay unknown;
* :func:`caspar_service` -- ``clients`` threads sending the instances as single requests
  to one :class:`~caspar_backend.batch.service.SolverService` (closed loop: each thread
  waits for its answer before sending the next); latencies per request;
* :func:`caspar_service_split` -- the same in a fresh child process whose Python threads
  share the cores given and whose CPU kernel runs on the others
  (:func:`caspar_backend.batch.placement.split_cores`: it pins the whole process, so
  not this one).

:func:`compare` states how far two outcomes agree instance by instance.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

#: IPOPT's successful statuses (caspar uses the same names)
SOLVED = ("Solve_Succeeded", "Solved_To_Acceptable_Level")


@dataclass
class Workload:
    """Final.  ``nlp`` a CasADi problem dict with parameters, ``args`` its nlpsol call's
    ``x0`` and bounds (shared by every instance), ``params`` float64 (B, n_p)."""

    name: str
    nlp: dict
    args: dict
    params: np.ndarray

    @property
    def size(self) -> int:
        return self.params.shape[0]

    def head(self, B: int) -> "Workload":
        return Workload(self.name, self.nlp, self.args, self.params[:B])


@dataclass
class Outcome:
    """Final.  ``status`` (B) names, ``iterations`` int (B) with -1 where unknown, ``f``
    float (B) with NaN where unknown; ``total_s`` the wall seconds of all B solves,
    ``build_s`` the one-time set-up before them; ``extra`` what else the way measured
    (threads, latencies, batch sizes, a note)."""

    status: list
    iterations: np.ndarray
    f: np.ndarray
    total_s: float
    build_s: float = float("nan")
    extra: dict = field(default_factory=dict)

    @property
    def solved(self) -> int:
        return sum(s in SOLVED for s in self.status)

    def head(self, k: int) -> "Outcome":
        """The first ``k`` instances (times kept: they are the whole set's)."""
        return Outcome(self.status[:k], self.iterations[:k], self.f[:k], self.total_s,
                       self.build_s, self.extra)


def compare(a: Outcome, ref: Outcome) -> dict:
    """Instance by instance (``a`` and ``ref`` of equal size): ``status`` how many
    statuses are equal and ``iter`` how many iteration counts are equal (None when
    either side does not know them), ``df`` the largest relative objective difference
    |f - f_ref| / max(|f_ref|, 1e-12) over the instances both solved -- ``a``'s
    finite objectives where ``a`` has no statuses -- (NaN when there are none)."""
    known = "" not in a.status and "" not in ref.status
    ok_ref = np.array([s in SOLVED for s in ref.status], dtype=bool)
    ok_a = (np.array([s in SOLVED for s in a.status], dtype=bool) if "" not in a.status
            else np.isfinite(a.f))
    both = ok_a & ok_ref
    rel = np.abs(a.f - ref.f)[both] / np.maximum(np.abs(ref.f[both]), 1e-12)
    have_it = bool(np.all(a.iterations >= 0) and np.all(ref.iterations >= 0))
    return dict(status=sum(s == r for s, r in zip(a.status, ref.status)) if known else None,
                iter=int(np.sum(a.iterations == ref.iterations)) if have_it else None,
                df=float(rel.max()) if rel.size else float("nan"))


def compile_caspar(work: Workload, device: str):
    """(Problem, seconds): ``from_casadi`` plus the device's evaluator, then one untimed
    batch of up to 64 instances kept on the device to its end (lazy imports, CUDA
    contexts, and the first compile of every CuPy kernel the lockstep iteration uses:
    a run whose tail moves to the host early would leave most of them to the timed
    run)."""
    import caspar_backend as cb
    from caspar_backend.batch.ipm import LockstepIPM

    t = time.perf_counter()
    P = cb.from_casadi(work.nlp, **work.args)
    P.evaluator(device)
    build = time.perf_counter() - t
    keep = LockstepIPM.HOST_TAIL_WORK
    LockstepIPM.HOST_TAIL_WORK = 0
    try:
        P.solve_batch(p=work.params[:64], print_level=0, device=device)
    finally:
        LockstepIPM.HOST_TAIL_WORK = keep
    return P, build


def caspar_batch(P, work: Workload, device: str, tol: float, build_s=float("nan")) -> Outcome:
    t = time.perf_counter()
    r = P.solve_batch(p=work.params, print_level=0, tol=tol, device=device)
    total = time.perf_counter() - t
    paths = sorted(set(r.path))
    devices = sorted(set(r.extra.get("device", [])) - {""})
    return Outcome(list(r.status), np.asarray(r.iterations), np.asarray(r.f), total, build_s,
                   dict(note="path " + "+".join(paths) + " on " + "+".join(devices)))


def caspar_single(P, work: Workload, device: str, tol: float,
                  build_s=float("nan")) -> Outcome:
    st, it, f = [], [], []
    # untimed first call, as IPOPT's below: on a fresh machine the GPU path's first solve
    # compiles its CuPy kernels (seconds), which is set-up, not a solve's time
    P.solve(p=work.params[0], print_level=0, tol=tol, device=device)
    t = time.perf_counter()
    for p in work.params:
        r = P.solve(p=p, print_level=0, tol=tol, device=device)
        st.append(r.status)
        it.append(r.iterations)
        f.append(r.f)
    return Outcome(st, np.array(it), np.array(f), time.perf_counter() - t, build_s)


def _ipopt_solver(work: Workload, tol: float):
    import casadi as ca

    return ca.nlpsol("ipopt_ref", "ipopt", work.nlp, {
        "ipopt": {"print_level": 0, "sb": "yes", "tol": tol}, "print_time": False,
        "expand": True})


def _call_args(work: Workload) -> dict:
    return {k: v for k, v in work.args.items() if k in ("x0", "lbx", "ubx", "lbg", "ubg")}


def ipopt_sequential(work: Workload, tol: float) -> Outcome:
    args = _call_args(work)
    t = time.perf_counter()
    S = _ipopt_solver(work, tol)
    S(p=work.params[0], **args)     # untimed first call (IPOPT's one-time set-up)
    build = time.perf_counter() - t
    st, it, f = [], [], []
    t = time.perf_counter()
    for p in work.params:
        r = S(p=p, **args)
        stats = S.stats()
        st.append(stats["return_status"])
        it.append(int(stats["iter_count"]))
        f.append(float(r["f"]))
    return Outcome(st, np.array(it), np.array(f), time.perf_counter() - t, build)


def _map_in_child(work: Workload, tol: float, threads: int) -> tuple:
    """(build s, solve s, f (B,)): IPOPT's nlpsol mapped over the instances."""
    t = time.perf_counter()
    S = _ipopt_solver(work, tol)
    B = work.size
    F = S.map(B, "thread", threads)
    build = time.perf_counter() - t
    cols = {k: np.tile(np.reshape(np.asarray(v, float), (-1, 1)), (1, B))
            for k, v in _call_args(work).items()}
    t = time.perf_counter()
    r = F(p=work.params.T, **cols)
    return build, time.perf_counter() - t, np.asarray(r["f"], float).ravel()


def casadi_map(work: Workload, tol: float, threads: int, deadline: float = 3600.0) -> Outcome:
    """:func:`_map_in_child` in a forked child: a crash (IPOPT is not thread-safe in
    every build), an exception or ``deadline`` seconds without an answer give an
    outcome with NaN objectives and the reason in ``extra['note']``."""
    import multiprocessing as mp

    B = work.size
    unknown = dict(status=[""] * B, iterations=np.full(B, -1))
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(("ok", _map_in_child(work, tol, threads)))
        except BaseException as e:   # noqa: BLE001 - reported to the parent
            send.send(("error", f"{type(e).__name__}: {e}"[:200]))

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()         # the child's end only: a dead child is an end of file here
    answered = recv.poll(deadline)
    try:
        got = recv.recv() if answered else None
    except EOFError:
        got = None
    proc.join(5.0)
    if proc.is_alive():
        proc.kill()
        proc.join()
    extra = dict(threads=threads)
    if got is not None and got[0] == "ok":
        build, total, f = got[1]
        return Outcome(**unknown, f=f, total_s=total, build_s=build, extra=extra)
    why = (got[1] if got is not None else f"no answer in {deadline:.0f} s" if not answered
           else f"child exited with code {proc.exitcode}")
    return Outcome(**unknown, f=np.full(B, np.nan), total_s=float("nan"),
                   extra=dict(extra, note="failed: " + why.replace("|", "/")))


def caspar_service(P, work: Workload, device: str, tol: float, clients: int,
                   max_batch_size: int, max_wait: float, workers: int | None = None,
                   kernel_threads: int | None = None) -> Outcome:
    """Client k sends instances k, k + clients, ... one at a time to a service with
    ``workers`` worker threads (None: the service's default), each batch's kernel calls
    on ``kernel_threads`` threads (``solve_batch``'s option; None: every core); ``extra``:
    threads, p50_ms / p99_ms of the per-request latency (submit to answer), mean_batch,
    solve_ms (mean seconds in ``solve_batch`` per batch), queue_ms (mean wait of a
    request for its batch)."""
    from caspar_backend.batch.service import SolverService, default_workers

    B = work.size
    st, it, f = [""] * B, np.full(B, -1), np.full(B, np.nan)
    lat = np.full(B, np.nan)
    errors = []
    workers = default_workers(device) if workers is None else workers
    with SolverService(P, max_batch_size=max_batch_size, max_wait=max_wait,
                       workers=workers, print_level=0, tol=tol, device=device,
                       **({} if kernel_threads is None else {"threads": kernel_threads})) as svc:
        barrier = threading.Barrier(clients + 1)

        def client(k):
            try:
                barrier.wait()
                for i in range(k, B, clients):
                    t0 = time.perf_counter()
                    r = svc.solve(p=work.params[i])
                    lat[i] = time.perf_counter() - t0
                    st[i], it[i], f[i] = r.status, r.iterations, r.f
            except BaseException as e:   # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=client, args=(k,), daemon=True)
                   for k in range(clients)]
        for th in threads:
            th.start()
        barrier.wait()
        t = time.perf_counter()
        for th in threads:
            th.join()
        total = time.perf_counter() - t
    if errors:
        raise errors[0]
    stats = svc.stats
    return Outcome(st, it, f, total, extra=dict(
        threads=clients, p50_ms=1e3 * float(np.percentile(lat, 50)),
        p99_ms=1e3 * float(np.percentile(lat, 99)), mean_batch=stats.mean_batch_size,
        solve_ms=1e3 * stats.solve_seconds / max(stats.batches, 1),
        queue_ms=1e3 * stats.mean_wait,
        note=f"max_batch_size={max_batch_size}, max_wait={max_wait:g} s, "
             f"workers={workers}" + ("" if kernel_threads is None
                                      else f", kernel threads={kernel_threads}")
             + "; "
             f"{stats.batches} batches"))


def _service_in_child(make: tuple, tol: float, clients: int, max_batch_size: int,
                      max_wait: float, workers, python_cpus: str) -> Outcome:
    """:func:`caspar_service_split`'s child: split the cores first (before any kernel
    starts Numba's threads), build the workload ``make`` = (module, function, args) and
    its problem, warm the service on the first 2,000 instances, then measure."""
    import importlib

    from caspar_backend.batch.placement import split_cores

    split = split_cores(python_cpus)
    mod, fn, args = make
    work = getattr(importlib.import_module(mod), fn)(*args)
    P, _ = compile_caspar(work.head(2), "cpu")
    caspar_service(P, work.head(min(2000, work.size)), "cpu", tol, clients, max_batch_size,
                   max_wait, workers)
    out = caspar_service(P, work, "cpu", tol, clients, max_batch_size, max_wait, workers)
    k = split.kernel_threads
    out.extra["note"] += (f"; Python on cores {sorted(split.python)}, the kernel on the "
                          f"other {k} core{'s' if k > 1 else ''} (split_cores)")
    return out


def caspar_service_split(make: tuple, tol: float, clients: int, max_batch_size: int,
                         max_wait: float, python_cpus: str, workers: int | None = None
                         ) -> Outcome:
    """:func:`caspar_service` on ``device='cpu'`` in a spawned child process whose
    threads :func:`~caspar_backend.batch.placement.split_cores` puts on ``python_cpus``
    (the Python: clients and worker) and the other cores (the kernel: a service's
    default kernel threads, one per core); ``make`` = (module, function, args) builds
    the :class:`Workload` there (the child compiles its own problem)."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_service_in_child, (make, tol, clients, max_batch_size, max_wait,
                                              workers, python_cpus))
