"""casadi's records of its oracle Functions' calls (``dump_in`` / ``dump_out`` under
``specific_options`` / ``common_options``) from caspar's nlpsol: the files IPOPT's nlpsol
writes, call by call.  Reference: the casadi wheel's IPOPT with the same options."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi.frontend import nlpsol  # noqa: E402
from caspar_backend.adapters.casadi.nlpsol_options import NlpsolOptionError  # noqa: E402
from caspar_backend.adapters.casadi.oracle_dumps import split_dump_options  # noqa: E402
from caspar_backend.evaluators.observed import ObservedEvaluator  # noqa: E402


def _problem():
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p")
    nlp = {"x": x, "p": p, "f": (x[0] - x[1]) ** 2 + p * x[2] ** 2,
           "g": ca.vertcat(x[0] + x[1], x[2] + x[0])}
    return nlp, dict(x0=[1, 2, 1], p=2.0, lbg=1, ubg=ca.inf)


def _records(folder):
    d = str(folder) + os.sep
    return {"specific_options": {
        "nlp_f": {"final_options": {"dump_in": True, "dump_out": True, "dump_dir": d}},
        "nlp_grad_f": {"final_options": {"dump_out": True, "dump_dir": d}}},
        "common_options": {"final_options": {"dump_dir": d, "dump_in": True}},
        "print_time": False}


def test_the_records_are_ipopts_call_by_call(tmp_path):
    nlp, call = _problem()
    (tmp_path / "ipopt").mkdir()
    (tmp_path / "caspar").mkdir()
    I = ca.nlpsol("i", "ipopt", nlp, {**_records(tmp_path / "ipopt"),
                                      "ipopt": {"print_level": 0, "sb": "yes"}})
    S = nlpsol("s", "caspar", nlp, {**_records(tmp_path / "caspar"),
                                    "caspar": {"print_level": 0}})
    ri, rc = I(**call), S(**call)
    assert S.stats()["iter_count"] == I.stats()["iter_count"]
    np.testing.assert_allclose(float(rc["f"]), float(ri["f"]), atol=1e-12)
    n_f = I.stats()["n_call_nlp_f"]
    for name in (["nlp_f.%06d.in.x.mtx" % k for k in range(n_f)]
                 + ["nlp_f.000000.out.f.mtx", "nlp_grad_f.000001.out.grad_f_x.mtx",
                    "nlp_grad.000000.in.lam_g.mtx", "nlp_grad.000000.in.x.mtx"]):
        a = np.array(ca.DM.from_file(str(tmp_path / "ipopt" / name)))
        b = np.array(ca.DM.from_file(str(tmp_path / "caspar" / name)))
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12, err_msg=name)
    # common_options' records for the functions without their own (nlp_jac_g, nlp_g,
    # nlp_hess_l: inputs only), none where a function's own final_options leave them out
    for name in ("nlp_jac_g.000000.in.x.mtx", "nlp_hess_l.000000.in.lam_g.mtx",
                 "nlp_g.000002.in.x.mtx"):
        a = np.array(ca.DM.from_file(str(tmp_path / "ipopt" / name)))
        b = np.array(ca.DM.from_file(str(tmp_path / "caspar" / name)))
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12, err_msg=name)
    assert not list((tmp_path / "caspar").glob("nlp_grad_f.*.in.*"))
    assert sorted(p.name for p in (tmp_path / "ipopt").iterdir() if ".000000." in p.name) \
        == sorted(p.name for p in (tmp_path / "caspar").iterdir() if ".000000." in p.name)


def test_records_take_the_general_path_and_report_every_evaluation(tmp_path):
    nlp, call = _problem()
    S = nlpsol("s", "caspar", nlp, {**_records(tmp_path), "caspar": {"print_level": 0}})
    assert S._core.records is not None and not S._core.kernels_may_solve()
    S(**call)
    n_f = S.stats()["n_call_nlp_f"]
    # (one record more than the solver's count: the returned f, evaluated at the result)
    assert len(list(tmp_path.glob("nlp_f.*.in.x.mtx"))) == n_f + 1


def test_other_oracle_options_are_ignored_with_a_warning():
    nlp, call = _problem()
    with pytest.warns(UserWarning, match="ignores the options specific_options"):
        S = nlpsol("s", "caspar", nlp, {"specific_options": {"nlp_f": {"jit": True}},
                                        "print_time": False, "caspar": {"print_level": 0}})
    assert S._core.records is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # records only: nothing to warn about
        nlpsol("s", "caspar", nlp, {"common_options": {"final_options": {"dump_in": False}},
                                    "print_time": False})
    with pytest.raises(NlpsolOptionError, match="specific_options\\['nlp_f'\\] must be a dict"):
        nlpsol("s", "caspar", nlp, {"specific_options": {"nlp_f": 3}})


def test_split_merges_common_and_specific_options_as_casadi():
    records, other = split_dump_options(
        {"final_options": {"dump_dir": "d/", "dump_in": True}},
        {"nlp_g": {"final_options": {"dump_in": False}},
         "nlp_f": {"final_options": {"dump_out": True}}, "nlp_fg": {}})
    assert not other
    assert records["nlp_f"] == {"dump_out": True}          # (casadi: not recursive)
    assert records["nlp_jac_g"] == {"dump_dir": "d/", "dump_in": True}
    assert "nlp_g" not in records                  # switched off by its own entry
    assert set(records) == {"nlp_f", "nlp_grad", "nlp_grad_f", "nlp_hess_l", "nlp_jac_g"}


def test_observed_evaluator_withholds_the_shortcuts():
    nlp, call = _problem()
    S = nlpsol("s", "caspar", nlp, {"print_time": False, "caspar": {"print_level": 0}})
    seen = []

    class Observer:
        def __getattr__(self, kind):
            return lambda *a: seen.append(kind)

    ev = ObservedEvaluator(S._core.problem.evaluator("cpu", p=[2.0]), Observer())
    assert not hasattr(ev, "obj_and_cons")
    x = np.array([1.0, 2.0, 1.0])
    assert ev.obj(x) == pytest.approx(3.0)
    ev.grad(x), ev.cons(x), ev.jac_values(x), ev.hess_values(x, np.ones(2))
    assert seen == ["obj", "grad", "cons", "jac", "hess"]


def test_the_solver_functions_own_records_are_ipopts(tmp_path):
    """``dump_in`` / ``dump_out`` on the nlpsol Function itself: casadi's records of its
    calls (inputs x0 ... lam_g0, outputs x ... lam_p), file for file as for ipopt."""
    nlp, call = _problem()
    for name, plugin, mk in (("ipopt", "ipopt", ca.nlpsol), ("caspar", "caspar", nlpsol)):
        (tmp_path / name).mkdir()
        S = mk("S", plugin, nlp, {"dump_in": True, "dump_out": True, "print_time": False,
                                  "dump_dir": str(tmp_path / name) + os.sep,
                                  plugin: {"print_level": 0}})
        S(**call)
    ipopt, caspar = (sorted(p.name for p in (tmp_path / d).iterdir())
                     for d in ("ipopt", "caspar"))
    assert ipopt == caspar and "S.000000.in.x0.mtx" in caspar
    for name in ("S.000000.in.x0.mtx", "S.000000.in.lbg.mtx", "S.000000.out.x.mtx",
                 "S.000000.out.lam_g.mtx"):
        a = np.array(ca.DM.from_file(str(tmp_path / "ipopt" / name)))
        b = np.array(ca.DM.from_file(str(tmp_path / "caspar" / name)))
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9, err_msg=name)
