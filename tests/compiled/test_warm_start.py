"""IPOPT's warm start in the kernels (compiled/kernels/start.py ``warm_primal``,
``warm_multipliers``): a solve with ``warm_start_init_point`` runs on the compiled path
from its first iteration, and the user sees the general path's solve -- status,
iterations, x and f bit for bit, multipliers, history, counts, final errors and the
printed log -- single solves (Problem.solve) and CPU batches (each instance its own
single solve)."""
import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

from caspar_backend.adapters.casadi.models import arm_targets  # noqa: E402
from caspar_backend.compiled.kernels.slots import (OPT_WARM_START_BOUND_FRAC,  # noqa: E402
                                                   OPT_WARM_START_BOUND_PUSH,
                                                   OPT_WARM_START_SLACK_BOUND_FRAC,
                                                   OPT_WARM_START_SLACK_BOUND_PUSH)
from caspar_backend.compiled.options import option_vector, resolve  # noqa: E402
from caspar_backend.errors import ModelError  # noqa: E402
from tests.compiled.test_dispatch import (BANK, X0, _assert_same, _assert_same_answer,  # noqa: E402
                                          _bank_problem, _solve_both, ik)
from tests.compiled.test_fresh_start import handed  # noqa: E402

__all__ = ["ik", "handed"]      # the fixtures, imported


def test_warm_start_options_are_the_kernels():
    opts, reason = resolve({"warm_start_init_point": True, "warm_start_bound_push": 1e-6,
                            "warm_start_mult_bound_push": 1e-7, "bound_frac": 0.2})
    assert reason == ""
    O = option_vector(opts)
    # IPOPT's rule: a warm_start_* push the user set, else bound_push / bound_frac
    assert O[OPT_WARM_START_BOUND_PUSH] == 1e-6
    assert O[OPT_WARM_START_BOUND_FRAC] == 0.2
    assert O[OPT_WARM_START_SLACK_BOUND_PUSH] == 1e-2
    assert O[OPT_WARM_START_SLACK_BOUND_FRAC] == 0.2


def test_warm_started_ik_on_the_kernels_is_the_general_paths(ik, handed):
    targets = arm_targets(5)
    first = ik.solve(x0=X0, p=targets[0], print_level=0)
    runs = 0
    for t, kw in zip(targets[1:], (dict(warm_start_bound_push=1e-6),
                                   dict(warm_start_bound_push=1e-6,
                                        warm_start_mult_bound_push=1e-6),
                                   dict(),                   # IPOPT's default pushes
                                   dict(warm_start_mult_init_max=0.5))):
        both = _solve_both(ik, x0=first.x, p=t, lam_g0=first.lam_g, lam_x0=first.lam_x,
                           warm_start_init_point=True, print_frequency_iter=2, **kw)
        _assert_same(*both)
        runs += 1
    # no general run for the compiled solves: only the comparison's own
    assert handed == [None] * runs


@pytest.mark.parametrize("given", ["lam_g0", "lam_x0", "none"])
def test_missing_multipliers_count_as_zeros(ik, given):
    t0, t1 = arm_targets(2)
    first = ik.solve(x0=X0, p=t0, print_level=0)
    mults = dict(lam_g0=first.lam_g, lam_x0=first.lam_x)
    kw = {k: v for k, v in mults.items() if k == given}
    _assert_same(*_solve_both(ik, x0=first.x, p=t1, warm_start_init_point=True,
                              warm_start_bound_push=1e-6, **kw))


def test_a_wrong_length_is_the_general_paths_error(ik):
    for mode in ("yes", "no"):
        with pytest.raises(ModelError, match="lam_g0 has 3 entries, expected 1"):
            ik.solve(x0=X0, p=arm_targets(1)[0], lam_g0=[1.0, 2.0, 3.0], print_level=0,
                     warm_start_init_point=True, compiled_path=mode)


#: bank problems with inequality rows (slacks), equality rows only, bounds only
WARM_BANK = ["hs071", "hs076", "hs035", "hs027", "hs006", "hs038", "hs021", "hs015",
             "hs034", "hs043", "ring_inequalities", "optimal_control_200", "fixed_variables",
             "bound_only_quadratic", "maratos"]


@pytest.mark.parametrize("name", [n for n in WARM_BANK if n in BANK])
def test_bank_warm_starts_are_the_general_paths(ik, name):
    """Warm starts from the solution with perturbed x (pushes that leave x and pushes
    that move it: x on a bound), the solution's multipliers scaled."""
    problem, d = _bank_problem(name)
    opts = dict(BANK[name].options)
    sol = problem.solve(d["x0"], print_level=0, **opts)
    rng = np.random.default_rng(7)
    x = np.asarray(sol.x) * (1 + 1e-3 * rng.standard_normal(len(sol.x)))
    lbx = np.asarray(d["lbx"], float)
    on_bound = np.where(np.isfinite(lbx), lbx, x)          # every finite lower bound hit
    for x0, lam_scale in ((x, 1.0), (on_bound, 2.0)):
        (r, log_r), (e, log_e) = _solve_both(
            problem, x0, lam_g0=lam_scale * np.asarray(sol.lam_g),
            lam_x0=lam_scale * np.asarray(sol.lam_x), warm_start_init_point=True,
            warm_start_bound_push=1e-9, warm_start_mult_bound_push=1e-9,
            print_frequency_iter=3, **opts)
        assert r.extra.get("path") == "compiled" or "resumed_at" in r.extra
        _assert_same_answer(r, e)
        assert log_r == log_e


def test_batch_warm_starts_on_the_kernel_are_single_solves(ik):
    targets = arm_targets(9, seed=11)
    first = ik.solve_batch(x0=X0, p=targets, print_level=0)
    nxt = arm_targets(9, seed=12)
    kw = dict(warm_start_init_point=True, warm_start_bound_push=1e-6,
              warm_start_mult_bound_push=1e-6)
    r = ik.solve_batch(x0=first.x, p=nxt, lam_g0=first.lam_g, lam_x0=first.lam_x,
                       print_level=0, **kw)
    assert set(r.path) == {"kernel"}
    for b in range(len(nxt)):
        s = ik.solve(x0=first.x[b], p=nxt[b], lam_g0=first.lam_g[b], lam_x0=first.lam_x[b],
                     print_level=0, compiled_path="no", **kw)
        assert (r.status[b], r.iterations[b]) == (s.status, s.iterations)
        np.testing.assert_array_equal(r.x[b], s.x)
        assert r.f[b] == s.f
    # the same warm start without multipliers: zeros, as a single solve reads them
    r0 = ik.solve_batch(x0=first.x, p=nxt, print_level=0, **kw)
    s0 = ik.solve(x0=first.x[3], p=nxt[3], print_level=0, compiled_path="no", **kw)
    assert r0.iterations[3] == s0.iterations and r0.f[3] == s0.f


@pytest.mark.parametrize("cap", [1e6, 0.5, 0.0, -1.0])
@pytest.mark.parametrize("scale", [1.0, 1e3])
def test_the_multiplier_cap_is_ipopts_on_both_paths(cap, scale):
    """warm_start_mult_init_max as IPOPT's WarmStartIterateInitializer: y clipped to
    +-cap and the bound multipliers capped, then raised to warm_start_mult_bound_push; a
    cap <= 0 caps nothing (it clipped every multiplier to 0).  HS071 warm-started from
    IPOPT's multipliers times ``scale``: IPOPT's status, iterations and objective on the
    compiled and the general path."""
    import casadi as ca

    from caspar_backend.casadi import nlpsol

    x = ca.SX.sym("x", 4)
    nlp = {"x": x, "f": x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2],
           "g": ca.vertcat(x[0] * x[1] * x[2] * x[3], ca.sumsqr(x))}
    args = dict(x0=[1, 5, 5, 1], lbx=1, ubx=5, lbg=[25, 40], ubg=[ca.inf, 40])
    quiet = {"print_time": 0}
    ref = ca.nlpsol("S", "ipopt", nlp, quiet | {"ipopt.print_level": 0})(**args)
    warm = dict(args, x0=0.9 * np.ravel(ref["x"]), lam_g0=scale * np.ravel(ref["lam_g"]),
                lam_x0=scale * np.ravel(ref["lam_x"]))
    o = {"warm_start_init_point": "yes", "warm_start_mult_init_max": cap, "print_level": 0}
    S = ca.nlpsol("S", "ipopt", nlp, quiet | {"ipopt." + k: v for k, v in o.items()})
    r = S(**warm)
    want = (S.stats()["return_status"], S.stats()["iter_count"])
    for path in ("yes", "no"):
        C = nlpsol("C", "caspar", nlp, quiet | {"caspar": o | {"compiled_path": path}})
        rc = C(**warm)
        assert (C.stats()["return_status"], C.stats()["iter_count"]) == want, path
        assert abs(float(rc["f"]) - float(r["f"])) <= 1e-9 * abs(float(r["f"])), path
