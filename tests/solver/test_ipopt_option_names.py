"""Every IPOPT 3.14 option is known to caspar: an IPOPT user's option dict is never
refused as unknown.  ``data/ipopt_options.txt`` lists IPOPT 3.14.19's 282 options with
their defaults, as IPOPT itself prints them (casadi's build; ``print_options_documentation``
with ``print_advanced_options``).  Each is a row of caspar's table, an option without
effect on caspar's answers (warned where a value asks for something caspar does not
do), an algorithm choice of which caspar implements IPOPT's default (another value is an
OptionError naming what is implemented), or one of IPOPT's linear solvers' options."""
import os
import warnings

import pytest

from caspar_backend.errors import OptionError
from caspar_backend.solver.ipopt_options import IPOPT_NO_EFFECT, IPOPT_ONE_VALUE
from caspar_backend.solver.option_table import OPTIONS
from caspar_backend.solver.options import ignored_ipopt_option, resolve_options

DATA = os.path.join(os.path.dirname(__file__), "data", "ipopt_options.txt")

#: IPOPT options whose IPOPT default caspar does not implement, and why
DIFFERENT_DEFAULTS: dict = {}


def _ipopt_options():
    out = []
    for line in open(DATA):
        if line.startswith("#") or not line.strip():
            continue
        name, kind, default = line.split(None, 2)
        default = default.strip()
        if kind == "num":
            v = float(default)
            default = int(v) if v.is_integer() and "." not in default and "e" not in default else v
        elif default == '""':
            default = ""
        out.append((name, default))
    return out


OPTS = _ipopt_options()


def test_the_list_is_ipopts():
    assert len(OPTS) == 282
    names = {n for n, _ in OPTS}
    assert {"tol", "mu_strategy", "hessian_approximation", "ma57_pivtol"} <= names


@pytest.mark.parametrize("name, default", OPTS, ids=[n for n, _ in OPTS])
def test_known(name, default):
    assert (name in OPTIONS or name in IPOPT_NO_EFFECT or name in IPOPT_ONE_VALUE
            or ignored_ipopt_option(name)), name
    if name in DIFFERENT_DEFAULTS:
        with pytest.raises(OptionError, match=name):
            resolve_options({name: default})
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolve_options({name: default})       # IPOPT's default: never an error


def test_a_value_caspar_does_not_implement_is_an_error():
    with pytest.raises(OptionError, match="alpha_for_y.*not implemented.*'primal'"):
        resolve_options({"alpha_for_y": "full"})
    with pytest.raises(OptionError, match="gamma_theta"):
        resolve_options({"gamma_theta": 1e-4})
    resolve_options({"gamma_theta": 1e-5, "mehrotra_algorithm": "no",
                     "limited_memory_update_type": "bfgs", "mu_oracle": "loqo"})


def test_a_value_without_effect_warns_and_a_default_does_not():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve_options({"hessian_constant": "no", "print_info_string": "no",
                         "sigma_max": 50.0})
    with pytest.warns(UserWarning, match="print_info_string.*no effect"):
        resolve_options({"print_info_string": "yes"})
    # (IPOPT keeps its first evaluation: the iterates differ where the user's 'constant'
    # function is not -- CasADi's hs071 with jac_c_constant='yes': 24 iterations)
    with pytest.warns(UserWarning, match="jac_c_constant.*IPOPT keeps its first"):
        resolve_options({"jac_c_constant": "yes"})


def test_options_of_ipopts_ampl_executable():
    """Pyomo's 'ipopt' solver runs IPOPT's AMPL executable, whose users set
    halt_on_ampl_error and wantsol: accepted (no evaluation through AMPL here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve_options({"halt_on_ampl_error": "yes", "wantsol": 8})
