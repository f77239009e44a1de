"""``caspar demo``: solve a realistic model with caspar and with IPOPT, side by side.

The model is the Van der Pol optimal-control problem of
:func:`caspar_backend.adapters.casadi.models.vanderpol_ocp` (direct multiple
shooting, one pattern group for all N shooting intervals).  IPOPT 3.14 from the
casadi wheel solves the same CasADi problem in the same run; the table shows
status, objective, iterations and wall times, and the demo fails (exit status 1)
when the objectives disagree.  A second part solves the three-link arm IK
(:func:`~caspar_backend.adapters.casadi.models.arm_ik`) for many targets in one
``solve_batch`` call against IPOPT called once per target, and fails likewise when a
status or objective differs.

It lives with the CasADi adapter because it needs casadi; the core's command line
imports it only when ``caspar demo`` runs.
"""

from __future__ import annotations

import time

from caspar_backend.device import gpu_problem


def _ipopt(nlp, args, tol):
    import casadi as ca

    t = time.perf_counter()
    S = ca.nlpsol("ipopt", "ipopt", nlp, {"expand": True, "print_time": False,
                                          "ipopt": {"print_level": 0, "sb": "yes", "tol": tol}})
    build = time.perf_counter() - t
    t = time.perf_counter()
    r = S(**args)
    wall = time.perf_counter() - t
    st = S.stats()
    return dict(status=st["return_status"], f=float(r["f"]), iterations=st["iter_count"],
                build=build, solve=wall)


def _caspar(nlp, args, tol, device):
    from caspar_backend import solver  # noqa: F401  (import time is not solve time)
    from caspar_backend.compiled.dispatch import kernels_ready

    # likewise loading the compiled interior point's kernels from their cache (or
    # starting their one-time compile in the background: the general path solves then)
    kernels_ready(wait=False)

    from .nlp import from_casadi

    t = time.perf_counter()
    prob = from_casadi(nlp, **args)
    prob.evaluator(device)  # code generation belongs to the build, as IPOPT's expand does
    build = time.perf_counter() - t
    t = time.perf_counter()
    r = prob.solve(tol=tol, print_level=0, device=device)
    return dict(status=r.status, f=float(r.f), iterations=r.iterations, build=build,
                solve=time.perf_counter() - t, groups=len(prob.groups), n=prob.n, m=prob.m)


def _device(requested: str) -> tuple[str, str]:
    """The device the demo runs on and a sentence saying why."""
    why_not = gpu_problem()
    if requested == "cpu":
        return "cpu", "as requested" + ("" if why_not else "; `--device cuda` runs it on the GPU")
    if why_not is None:
        return "cuda", "GPU usable: CUDA evaluator and cuDSS"
    if requested == "cuda":
        from caspar_backend.errors import DeviceError

        raise DeviceError(f"--device cuda: {why_not}")
    return "cpu", "no usable GPU: " + why_not.split(";")[0]


def run(N: int = 2000, tol: float = 1e-8, out=print, device: str = "cpu",
        batch: int = 1000) -> int:
    """Run the demo; returns the process exit status.  ``device``: 'cpu', 'cuda' or
    'auto' (the GPU when usable).  The default stays 'cpu' until the GPU path has been
    measured on this model (benchmarks/RESULTS.md).  ``batch``: targets of the
    many-instances part (0: skip it)."""
    from .models import vanderpol_ocp

    device, note = _device(device)
    out(f"caspar demo: Van der Pol optimal control, direct multiple shooting, N = {N}, "
        f"tol = {tol:g}")
    out(f"device: {device} ({note})")
    nlp, args = vanderpol_ocp(N)
    ours = _caspar(nlp, args, tol, device)
    ref = _ipopt(nlp, args, tol)
    out(f"n = {ours['n']} variables, m = {ours['m']} constraints, "
        f"{ours['groups']} pattern groups\n")
    out("| solver | device | status | objective | iterations | build s | solve s |")
    out("|---|---|---|---|---|---|---|")
    for name, r, dev in (("caspar", ours, device), ("IPOPT 3.14 (casadi)", ref, "cpu")):
        out(f"| {name} | {dev} | {r['status']} | {r['f']:.10g} | {r['iterations']} | "
            f"{r['build']:.2f} | {r['solve']:.2f} |")
    rel = abs(ours["f"] - ref["f"]) / max(1.0, abs(ref["f"]))
    same = rel <= 1e-6 and ours["status"] == ref["status"]
    out(f"\nobjectives {'match' if same else 'DIFFER'}: relative difference {rel:.1e}")
    batch_same = _batch(batch, tol, device, out) if batch else True
    return 0 if same and batch_same else 1


def _batch(B: int, tol: float, device: str, out) -> bool:
    """Many instances: the three-link arm IK for B targets in one ``solve_batch`` call,
    against IPOPT called once per target; True when every status and objective agrees."""
    import casadi as ca
    import numpy as np

    from .models import arm_ik, arm_targets
    from .nlp import from_casadi

    nlp, bounds = arm_ik()
    targets = arm_targets(B)
    x0 = [0.1, 0.2, 0.3]
    prob = from_casadi(nlp, **bounds)
    prob.solve_batch(x0=x0, p=targets[:2], tol=tol, device=device)   # first-call work
    t = time.perf_counter()
    res = prob.solve_batch(x0=x0, p=targets, tol=tol, device=device)
    t_batch = time.perf_counter() - t
    S = ca.nlpsol("ipopt", "ipopt", nlp, {"print_time": False,
                                          "ipopt": {"print_level": 0, "sb": "yes", "tol": tol}})
    t = time.perf_counter()
    ref = [(float(r["f"]), S.stats()["return_status"]) for r in
           (S(x0=x0, p=tt, **bounds) for tt in targets)]
    t_ipopt = time.perf_counter() - t
    f_ref = np.array([f for f, _ in ref])
    same = sum(st == s for (_, st), s in zip(ref, res.status))
    rel = float(np.max(np.abs(res.f - f_ref) / np.maximum(1.0, np.abs(f_ref))))
    out(f"\nmany instances: three-link arm IK, {B} targets, one solve_batch call ({device})")
    out("| solver | s | ms per target |\n|---|---|---|")
    out(f"| caspar solve_batch | {t_batch:.2f} | {1e3 * t_batch / B:.3f} |")
    out(f"| IPOPT, one call per target | {t_ipopt:.2f} | {1e3 * t_ipopt / B:.3f} |")
    ok = same == B and rel <= 1e-6
    out(f"statuses equal {same}/{B}, largest relative objective difference {rel:.1e}: "
        f"{'match' if ok else 'DIFFER'}")
    return ok
