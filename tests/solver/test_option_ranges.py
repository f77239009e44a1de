"""caspar's numeric option ranges are IPOPT's: the same bounds, strict where IPOPT's are
(``tol``: 0 < value) and inclusive where IPOPT's are (``bound_relax_factor``: 0 <=
value).  ``data/ipopt_option_ranges.txt`` is IPOPT 3.14.19's printed documentation of
its numeric options (casadi's build)."""

import math
import os

import pytest

from caspar_backend.errors import OptionError
from caspar_backend.solver.option_table import OPTIONS
from caspar_backend.solver.options import resolve_options

DATA = os.path.join(os.path.dirname(__file__), "data", "ipopt_option_ranges.txt")


def _ranges() -> dict:
    out = {}
    for line in open(DATA):
        if line.startswith("#") or not line.strip():
            continue
        name, lo, lop, hop, hi = line.split()
        out[name] = (float(lo), lop == "<", float(hi), hop == "<")
    return out


IPOPT = _ranges()
SHARED = sorted(n for n in IPOPT if n in OPTIONS and OPTIONS[n].type in (int, float))


def test_the_ranges_are_ipopts():
    assert len(IPOPT) == 189 and len(SHARED) >= 88
    assert IPOPT["tol"] == (0.0, True, math.inf, True)
    assert IPOPT["bound_relax_factor"][:2] == (0.0, False)


@pytest.mark.parametrize("name", SHARED)
def test_range_equals_ipopts(name):
    lo, lo_open, hi, hi_open = IPOPT[name]
    o = OPTIONS[name]
    assert (o.low, o.high) == (lo, hi), name
    if math.isfinite(lo):
        assert o.low_open == lo_open, name
    if math.isfinite(hi):
        assert o.high_open == hi_open, name


@pytest.mark.parametrize("name, value", [
    ("tol", 0.0), ("mu_init", 0.0), ("bound_push", 0.0), ("max_wall_time", 0.0),
    ("alpha_red_factor", 1.0), ("tau_min", 1.0), ("mu_superlinear_decrease_power", 2.0),
    ("required_infeasibility_reduction", 1.0), ("tol", float("nan"))])
def test_a_value_on_a_strict_bound_is_refused_naming_the_option(name, value):
    with pytest.raises(OptionError, match=rf"{name}.*<.*IPOPT's range"):
        resolve_options({name: value})


@pytest.mark.parametrize("name, value", [
    ("bound_relax_factor", 0.0), ("kappa_d", 0.0), ("max_iter", 0), ("max_soc", 0),
    ("required_infeasibility_reduction", 0.0), ("warm_start_mult_init_max", -1.0),
    ("warm_start_mult_init_max", 0.0), ("tol", 1e-300)])
def test_a_value_ipopt_admits_is_admitted(name, value):
    assert getattr(resolve_options({name: value}), name) == value


def test_numbers_written_as_text_are_read_as_ipopt_reads_its_command_line():
    """Pyomo passes solver.options to IPOPT as text: max_iter '3', tol '1e-6' work there
    (they were OptionErrors here); an integer option still refuses '3.5', and a text
    that is no number names the option."""
    o = resolve_options({"max_iter": "3", "tol": "1e-6", "mu_init": " 0.1 "})
    assert (o.max_iter, o.tol, o.mu_init) == (3, 1e-6, 0.1) and type(o.max_iter) is int
    with pytest.raises(OptionError, match="max_iter.*an int"):
        resolve_options({"max_iter": "3.5"})
    with pytest.raises(OptionError, match="'tol' expects a number, got 'abc'"):
        resolve_options({"tol": "abc"})
    with pytest.raises(OptionError, match="tol.*IPOPT's range"):
        resolve_options({"tol": "0"})
