"""``stats()`` of nlpsol(..., 'caspar', ...) has every key casadi's ipopt gives after a
solve (a script written for IPOPT reads ``t_wall_nlp_f`` or ``n_call_callback_fun``),
with the same types; the per-function seconds are caspar's own evaluations' where the
general path ran (NaN inside the compiled kernels), and the iteration callback is
counted as IPOPT's; casadi's code-generation entry says what to do instead."""

from __future__ import annotations

import math

import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.casadi import nlpsol  # noqa: E402
from tests.support.casadi_callbacks import Recorder  # noqa: E402


def _nlp():
    x = ca.SX.sym("x", 2)
    return {"x": x, "f": (x[0] - 1) ** 2 + (x[1] - 2) ** 2, "g": x[0] * x[1]}, \
        dict(x0=[0.5, 0.5], lbg=0, ubg=1)


@pytest.mark.parametrize("compiled", ["yes", "no"])
def test_every_key_of_ipopts_stats(compiled):
    nlp, args = _nlp()
    ref = ca.nlpsol("I", "ipopt", nlp, {"print_time": 0,
                                        "ipopt": {"print_level": 0, "sb": "yes"}})
    ref(**args)
    S = nlpsol("S", "caspar", nlp, {"print_time": 0, "caspar": {
        "print_level": 0, "compiled_path": compiled}})
    S(**args)
    st, sti = S.stats(), ref.stats()
    assert set(sti) <= set(st), set(sti) - set(st)
    for key in sti:
        assert type(st[key]) is type(sti[key]), key
    for name in ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g", "nlp_hess_l"):
        wall, proc = st[f"t_wall_{name}"], st[f"t_proc_{name}"]
        if compiled == "yes":
            assert math.isnan(wall) and math.isnan(proc)
        else:
            assert wall > 0 and proc >= 0
    assert st["n_call_nlp_grad"] == 0 and st["n_call_callback_fun"] == 0


def test_iteration_callback_counted_as_ipopts():
    nlp, args = _nlp()
    cb = Recorder(2, 1, 0, lam_p=False)
    ref = ca.nlpsol("I", "ipopt", nlp, {"print_time": 0, "iteration_callback": cb,
                                        "ipopt": {"print_level": 0, "sb": "yes"}})
    ref(**args)
    S = nlpsol("S", "caspar", nlp, {"print_time": 0, "iteration_callback": cb,
                                    "caspar": {"print_level": 0}})
    S(**args)
    st, sti = S.stats(), ref.stats()
    assert st["iter_count"] == sti["iter_count"]
    assert st["n_call_callback_fun"] == sti["n_call_callback_fun"] > 0
    assert st["t_wall_callback_fun"] > 0


def test_generate_dependencies_says_what_to_do_instead():
    """CasADi's nlp_codegen example calls ``solver.generate_dependencies('nlp.c')`` to
    compile the NLP for ``nlpsol(..., 'ipopt', './nlp.so')``: caspar's solver says that
    path is IPOPT's (casadi's own message named an MXFunction)."""
    nlp, _ = _nlp()
    S = nlpsol("S", "caspar", nlp)
    with pytest.raises(RuntimeError, match="generate_dependencies is not available.*ipopt"):
        S.generate_dependencies("nlp.c")
