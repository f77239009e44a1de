"""mu_strategy 'adaptive' against IPOPT 3.14 with the same oracle and globalization
(caspar_backend.solver.mu's and .mu_oracles' module docs): IPOPT's defaults
(quality-function, obj-constr-filter), the loqo and probing oracles, the kkt-error
globalization, and the limited-memory Hessian's defaults; status, iterations and
objective on bank problems, restoration phases (run with the same strategy, as IPOPT's)
and start_with_resto included."""
import pytest

ca = pytest.importorskip("casadi")

from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import run_caspar, run_ipopt  # noqa: E402

ADAPTIVE = {"mu_strategy": "adaptive", "mu_oracle": "loqo"}
PROBLEMS = {p.name: p for p in bank(include_slow=False)}
#: bank problems with bounds and constraints of several kinds, unbounded ones (mu at
#: mu_min), equality-only ones and a fixed-mode excursion among them
NAMES = ["hs003", "hs004", "hs012", "hs016", "hs018", "hs021", "hs031", "hs033", "hs065",
         "hs071", "hs076", "bound_only_quadratic", "optimal_control_200",
         "ring_inequalities", "infeasible_disc_halfplane",
         "restoration_to_local_infeasibility_wb", "needs_restoration_exp",
         "needs_restoration_circle"]


@pytest.mark.parametrize("globalization", ["obj-constr-filter", "kkt-error"])
@pytest.mark.parametrize("name", NAMES)
def test_adaptive_as_ipopt(name, globalization):
    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    opts = dict(ADAPTIVE, adaptive_mu_globalization=globalization)
    ri = run_ipopt(d, opts)
    rc = run_caspar(d, dict(opts, compiled_path="no"))
    assert (rc.status, rc.iterations) == (ri["status"], ri["iter"])
    assert rc.f == pytest.approx(ri["f"], rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_adaptive_defaults_as_ipopt(name):
    """mu_strategy 'adaptive' alone: IPOPT's defaults, the quality-function oracle and
    the obj-constr-filter globalization."""
    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    ri = run_ipopt(d, {"mu_strategy": "adaptive"})
    rc = run_caspar(d, {"mu_strategy": "adaptive", "compiled_path": "no"})
    assert (rc.status, rc.iterations) == (ri["status"], ri["iter"])
    assert rc.f == pytest.approx(ri["f"], rel=1e-8, abs=1e-10)


def test_oracle_options():
    """IPOPT's three oracles by name; the quality function's own variants other than
    IPOPT's defaults are not implemented (an error naming what is)."""
    from caspar_backend.errors import OptionError
    from caspar_backend.solver.options import resolve_options

    for oracle in ("quality-function", "probing", "loqo"):
        assert resolve_options({"mu_strategy": "adaptive", "mu_oracle": oracle}).mu_oracle \
            == oracle
    with pytest.raises(OptionError, match="quality_function_centrality.*'none'"):
        resolve_options({"mu_strategy": "adaptive", "quality_function_centrality": "log"})


@pytest.mark.parametrize("name", NAMES)
def test_probing_as_ipopt(name):
    """mu_oracle 'probing' (Mehrotra's rule from the affine-scaling step, solved with the
    iteration's factorization) with IPOPT's default globalization."""
    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    opts = {"mu_strategy": "adaptive", "mu_oracle": "probing"}
    ri = run_ipopt(d, opts)
    rc = run_caspar(d, dict(opts, compiled_path="no"))
    assert (rc.status, rc.iterations) == (ri["status"], ri["iter"])
    assert rc.f == pytest.approx(ri["f"], rel=1e-8, abs=1e-10)


#: bank problems whose limited-memory solve follows IPOPT's (the rosenbrock families
#: drift apart in the quasi-Newton updates at round-off), restoration phases, skipped
#: and reset memories (hs016, hs029), recalc_y and an unbounded problem included
LBFGS_NAMES = ["hs003", "hs004", "hs012", "hs016", "hs017", "hs018", "hs021", "hs029",
               "hs031", "hs033", "hs038", "hs065", "hs071", "hs076", "bound_only_quadratic",
               "optimal_control_200", "ring_inequalities", "needs_restoration_exp",
               "restoration_to_local_infeasibility_wb", "infeasible_disc_halfplane",
               "unbounded_linear"]


@pytest.mark.parametrize("name", LBFGS_NAMES)
def test_limited_memory_defaults_as_ipopt(name):
    """hessian_approximation 'limited-memory' takes IPOPT's defaults that go with it:
    mu_strategy 'adaptive' (with its quality-function oracle) and recalc_y on (the
    least-squares multipliers after each step below recalc_y_feas_tol)."""
    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    opts = {"hessian_approximation": "limited-memory"}
    ri = run_ipopt(d, opts)
    rc = run_caspar(d, dict(opts, compiled_path="no"))
    assert (rc.status, rc.iterations) == (ri["status"], ri["iter"])
    if rc.status != "Diverging_Iterates":       # (there: a point near 1e20, to round-off)
        assert rc.f == pytest.approx(ri["f"], rel=1e-7, abs=1e-9)


def test_limited_memory_default_options():
    from caspar_backend.solver.options import resolve_options

    o = resolve_options({"hessian_approximation": "limited-memory"})
    assert (o.mu_strategy, o.recalc_y) == ("adaptive", True)
    assert o.user == {"hessian_approximation": "limited-memory"}
    o = resolve_options({"hessian_approximation": "limited-memory",
                         "mu_strategy": "monotone", "recalc_y": "no"})
    assert (o.mu_strategy, o.recalc_y) == ("monotone", False)
    o = resolve_options({})
    assert (o.mu_strategy, o.recalc_y) == ("monotone", False)


@pytest.mark.parametrize("strategy", ["monotone", "adaptive"])
@pytest.mark.parametrize("name", ["hs004", "hs016", "hs033", "hs071", "ring_inequalities",
                                  "needs_restoration_exp"])
def test_mu_based_bound_multipliers_as_ipopt(name, strategy):
    """bound_mult_init_method 'mu-based': z = mu_init / slack at the starting point (the
    mu_init option's value, also under the adaptive update, which starts at mu = 1)."""
    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    opts = {"bound_mult_init_method": "mu-based", "mu_strategy": strategy}
    ri = run_ipopt(d, opts)
    rc = run_caspar(d, dict(opts, compiled_path="no"))
    assert (rc.status, rc.iterations) == (ri["status"], ri["iter"])
    assert rc.f == pytest.approx(ri["f"], rel=1e-8, abs=1e-10)
