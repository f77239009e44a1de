"""The compiled path's option check and its import cost (no Numba needed)."""
import subprocess
import sys

import pytest

from caspar_backend.compiled.kernels.slots import OPTION_NAMES, OPT_TOL
from caspar_backend.compiled.options import IMPLEMENTED, option_vector, resolve
from caspar_backend.errors import OptionError
from caspar_backend.solver.options import OPTIONS


def test_every_implemented_option_is_in_the_typed_table():
    assert IMPLEMENTED <= set(OPTIONS)
    derived = {"nlp_scaling_gradient_based", "private_pivot_fraction",
               "kkt_static_regularization_pivoting"}
    assert set(OPTION_NAMES) - derived <= set(OPTIONS)


@pytest.mark.parametrize("given, reason", [
    (dict(print_level=0), ""),
    (dict(print_level=0, tol=1e-6, max_iter=50, nlp_scaling_method="none"), ""),
    (dict(print_level=0, mu_strategy="monotone", linear_solver="qdldl"), ""),
    (dict(), ""),                       # the log is printed after the solve
    (dict(print_level=3, print_frequency_iter=2, print_user_options=True), ""),
    (dict(print_level=0, mu_strategy="adaptive"), "option mu_strategy='adaptive'"),
    (dict(print_level=0, max_cpu_time=1.0), "option max_cpu_time=1.0"),
    (dict(print_level=0, max_cpu_time=10.0, max_wall_time=1e4), ""),
    (dict(print_level=0, warm_start_init_point=True), ""),
    (dict(print_level=0, least_square_init_duals=True), "option least_square_init_duals=True"),
    (dict(print_level=0, hessian_approximation="limited-memory"), "hessian_approximation"),
])
def test_unsupported_reason(given, reason):
    _, got = resolve(given)
    assert (got == "") == (reason == "") and reason in got


def test_unknown_option_is_an_option_error():
    with pytest.raises(OptionError, match="acceptable_tol"):
        resolve(dict(tol_acceptable=1e-6))


def test_option_vector_holds_the_resolved_values():
    opts, _ = resolve(dict(print_level=0, tol=1e-5, max_iter=77))
    O = option_vector(opts)
    assert O[OPT_TOL] == 1e-5
    pushes = ("warm_start_bound_push", "warm_start_bound_frac",
              "warm_start_slack_bound_push", "warm_start_slack_bound_frac")
    for k, name in enumerate(OPTION_NAMES):
        if name in OPTIONS and name not in pushes:
            assert O[k] == float(opts[name]), name
    # a warm start's pushes: bound_push and bound_frac unless the warm_start_* was given
    # (IPOPT's WarmStartIterateInitializer; tests/compiled/test_warm_start.py)
    assert [O[OPTION_NAMES.index(name)] for name in pushes] == [
        opts.bound_push, opts.bound_frac, opts.bound_push, opts.bound_frac]


def test_importing_the_package_does_not_import_numba():
    code = ("import sys, caspar_backend, caspar_backend.compiled, "
            "caspar_backend.compiled.options; print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_kernels_read_the_group_table_with_its_width():
    pytest.importorskip("numba")
    from caspar_backend.compiled.kernels.tape_eval import GROUP_COLUMNS
    from caspar_backend.compiled.tape import G_COLS

    assert GROUP_COLUMNS == G_COLS
