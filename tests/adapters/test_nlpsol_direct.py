"""The direct path of numeric one-instance nlpsol calls (``adapters/casadi/nlpsol_direct``)
against casadi's own call path (``casadi.Function.call`` of the same Function, which
evaluates the wrapper and the callback):

* every kind of plain numeric argument the direct path reads (lists, tuples, NumPy
  vectors, rows, columns, 0-d arrays, NumPy scalars, bools, dense DMs, broadcast
  scalars, transposed vectors) gives the same outputs bit for bit, the same output
  container (dict in casadi's key order, or list), the same ``stats()`` (times aside)
  and the same printed output;
* arguments it does not read go through casadi (``inputs`` is None) with casadi's
  result or error;
* the options whose errors casadi wraps (``error_on_fail``, ``iteration_callback``, user
  derivatives) keep casadi's path.
"""

from __future__ import annotations

import re

import casadi as ca
import numpy as np
import pytest

from caspar_backend.adapters.casadi.nlpsol_direct import numeric_value
from caspar_backend.casadi import nlpsol
from tests.support.casadi_callbacks import Recorder

QC = {"caspar": {"print_level": 0}, "print_time": False}
INF = np.inf


def _arm():
    from caspar_backend.adapters.casadi.models import arm_ik

    nlp, bounds = arm_ik()
    return nlp, dict(x0=[0.1, 0.2, 0.3], p=[1.0, 1.2], **bounds)


def _matrix_p():
    """p a 2x2 matrix (casadi's nlpsol takes any p; x must be a vector), two
    constraints."""
    X = ca.reshape(ca.SX.sym("X", 6), 2, 3)
    P = ca.SX.sym("P", 2, 2)
    f = ca.sumsqr(X - P[0, 0]) + P[1, 1] * X[0, 0] ** 2 + P[0, 1] * X[1, 2]
    g = ca.vertcat(ca.sum1(ca.sum2(X)), X[1, 2] - X[0, 1])
    return ({"x": ca.vec(X), "p": P, "f": f, "g": g},
            dict(x0=np.arange(6.0) / 10, p=np.array([[0.5, 0.1], [0.0, 2.0]]),
                 lbx=-5, ubx=5, lbg=[-1.0, 0.0], ubg=[1.0, INF]))


def _no_p_simple():
    """No p; one simple bound row (detect_simple_bounds), no g besides."""
    x = ca.SX.sym("x", 3)
    f = (x[0] - 1) ** 2 + (x[1] - 2) ** 2 + x[2] ** 4 + x[0] * x[1]
    g = ca.vertcat(2 * x[1], x[0] + x[2] ** 2)
    return ({"x": x, "f": f, "g": g},
            dict(x0=ca.DM([0.5, 0.5, 0.5]), lbg=ca.DM([-1.0, 0.5]), ubg=[1.5, INF]))


CASES = {"arm": (_arm, {}), "matrix_p": (_matrix_p, {}),
         "no_p_simple": (_no_p_simple, {"detect_simple_bounds": True, "calc_lam_x": True})}


def _variants(args):
    """The same call with its arguments written in every form the direct path reads."""
    plain = {k: (v.full() if isinstance(v, ca.DM) else v) for k, v in args.items()}

    def each(fn):
        return {k: fn(v) for k, v in plain.items()}

    def row(v):
        a = np.asarray(v, float)
        return a.reshape(1, -1) if a.ndim == 1 and a.size > 1 else a

    return {"as_given": dict(args),
            "numpy": each(lambda v: np.asarray(v, float)),
            "dm": each(lambda v: ca.DM(np.asarray(v, float))),
            "tuple": each(lambda v: tuple(np.asarray(v, float).ravel(order="F").tolist())
                          if np.size(v) > 1 and np.ndim(v) < 2 else v),
            "row": each(row),
            "f32": each(lambda v: np.asarray(v, np.float32)),
            "np_scalar_lam": {**args, "lam_x0": np.float64(0.0), "lam_g0": np.int64(0),
                              "x0": np.asarray(plain["x0"])}}


def _same_dm(a, b):
    assert isinstance(a, ca.DM) and isinstance(b, ca.DM)
    assert a.sparsity() == b.sparsity()
    np.testing.assert_array_equal(np.array(a.nonzeros()), np.array(b.nonzeros()))


def _stats_without_times(st):
    def strip(d):
        return {k: (strip(v) if isinstance(v, dict) else v) for k, v in d.items()
                if not k.startswith("t_") and k != "timings"}
    return strip(st)


@pytest.mark.parametrize("case", sorted(CASES))
def test_direct_calls_equal_casadis_path(case, capsys):
    build, extra = CASES[case]
    nlp, args = build()
    S = nlpsol("S", "caspar", nlp, {**QC, **extra})
    assert S._core.direct_calls is not None
    for name, call in _variants(args).items():
        assert S._core.direct_calls.inputs(call) is not None, name
        got = S(**call)
        st = S.stats()
        want = ca.Function.call(S, call)          # casadi's own evaluation
        assert list(got) == list(want), name      # casadi's key order
        for k in want:
            _same_dm(got[k], want[k])
        assert _stats_without_times(st) == _stats_without_times(S.stats()), name
    # positional: a tuple of all eight inputs, as casadi's __call__ passes it
    names = ("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_x0", "lam_g0")
    defaults = dict(x0=0, p=0, lbx=-INF, ubx=INF, lbg=-INF, ubg=INF, lam_x0=0, lam_g0=0)
    pos = [args.get(k, defaults[k]) for k in names]
    got = S.call(pos)
    want = ca.Function.call(S, pos)
    assert isinstance(got, list) and len(got) == len(want) == 6
    for a, b in zip(got, want):
        _same_dm(a, b)
    assert isinstance(S(*pos), tuple)
    capsys.readouterr()


def test_printed_output_is_the_same(capsys):
    nlp, args = _arm()
    S = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 5}, "print_time": True})
    S(**args)
    direct = capsys.readouterr()
    ca.Function.call(S, args)
    through = capsys.readouterr()

    def steady(text):     # the timing columns differ from run to run
        return [line.split("|")[0] if "|" in line else
                "" if "seconds" in line.lower() else line for line in text.splitlines()]

    assert steady(direct.out) == steady(through.out) and direct.out.strip()
    assert direct.err == through.err


def test_arguments_left_to_casadi():
    nlp, args = _arm()
    S = nlpsol("S", "caspar", nlp, QC)
    d = S._core.direct_calls
    for v in (None, "abc", [[0.1], [0.2], [0.3]], [ca.DM(0.1), 0.2, 0.3],
              np.array([1, 2, 3], complex), np.ones((3, 1, 1)), np.array([1.0, 2, 3], object),
              ca.DM.zeros(ca.Sparsity.lower(3)), ca.MX.sym("x", 3), [10 ** 400, 0, 0]):
        try:
            assert numeric_value(v) is None or d.inputs({**args, "x0": v}) is None, repr(v)
        except OverflowError:
            assert d.inputs({**args, "x0": v}) is None
    for call in ({**args, "x0": [0.1, 0.2]},                    # a wrong size
                 {**args, "x0": []},                            # empty: casadi's rule
                 {**args, "p": np.ones((2, 3))},                # several columns
                 {**args, "bogus": 1.0},                        # casadi names it
                 [args["x0"], args["p"]]):                      # too few inputs
        assert d.inputs(call) is None
    with pytest.raises(RuntimeError, match="mismatching shape"):
        S(**{**args, "x0": [0.1, 0.2]})
    # several columns: the batched path, as before
    r = S(**{**args, "p": np.array([[1.0, 0.5], [1.2, 0.4]])})
    assert r["x"].shape == (3, 2)


def test_options_raising_through_casadi_keep_its_path():
    nlp, args = _arm()
    assert nlpsol("S", "caspar", nlp, {**QC, "error_on_fail": True})._core.direct_calls is None
    cb = nlpsol("S", "caspar", nlp, {**QC, "iteration_callback": Recorder(3, 1, 2)})
    assert cb._core.direct_calls is None
    cb(**args)


def test_bad_input_same_message_both_paths():
    nlp, args = _arm()
    S = nlpsol("S", "caspar", nlp, QC)
    bad = {**args, "lbx": [0.0, 1.0, np.nan]}
    with pytest.raises(Exception) as direct:
        S(**bad)
    with pytest.raises(Exception) as listed:       # a list of DMs: not the direct path
        S(**{**bad, "x0": [ca.DM(0.1), 0.2, 0.3]})
    assert type(direct.value) is type(listed.value)
    assert str(direct.value) == str(listed.value)
    assert "lbx[2]" in str(direct.value)


@pytest.mark.parametrize("call", [
    {"x0": [0.1, 0.2]}, {"x0": np.ones((1, 4))}, {"p": [1.0, 2.0, 3.0]},
    {"p": np.ones((3, 3))}, {"lbx": np.ones((2, 2))}, {"ubg": [1.0, 2.0, 3.0]},
    {"lam_g0": [1.0, 2.0, 3.0]}, {"lam_x0": np.ones(4)}, {"bogus": 1.0}],
    ids=["x0_short", "x0_row4", "p_long", "p_3x3", "lbx_2x2", "ubg_long", "lam_g0_long",
         "lam_x0_long", "unknown_name"])
def test_wrong_shapes_are_refused_in_casadis_words(call):
    """A wrong-shape or unknown input raises casadi's own error, word for word as
    casadi's ipopt nlpsol of the same name (the Function's class in brackets aside)."""
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p", 2)
    nlp = {"x": x, "p": p, "f": ca.sumsqr(x - p[0]), "g": ca.vertcat(x[0] + x[1], x[2] * p[1])}
    texts = []
    for make, solver, opts in ((ca.nlpsol, "ipopt", {"ipopt": {"print_level": 0, "sb": "yes"}}),
                               (nlpsol, "caspar", QC)):
        S = make("S", solver, nlp, {**opts, "print_time": False})
        with pytest.raises(RuntimeError) as info:
            S(**{"x0": [0.1, 0.2, 0.3], "p": [1.0, 2.0], **call})
        texts.append(re.sub(r"\[(IpoptInterface|MXFunction)\]", "[...]", str(info.value)))
    assert texts[0] == texts[1]
    assert "mismatching shape" in texts[1] or "could not find entry" in texts[1]
