"""The C++ twin of the bulk reader's tree hashing (adapters/casadi/sxnative.py) gives
the NumPy passes' results bit for bit: shape and value hashes, the hashed and ok masks,
on the SX corpus, an AC-OPF, and programs deeper and larger than the hashing limits."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi import sxdag, sxexport, sxhash, sxnative  # noqa: E402
from caspar_backend.adapters.casadi.nlp import problem_function  # noqa: E402

from tests.support.casadi_corpus import CASES, build  # noqa: E402

pytestmark = pytest.mark.skipif(sxnative.library() is None,
                                reason="no C++ compiler for the native loops")


def _both(nlp):
    """term_hashes of the program's outputs and additive items, NumPy and C++."""
    alg = sxexport.program(problem_function(nlp))
    dag = sxdag.build_dag(alg)
    nodes = np.concatenate([dag.out, np.flatnonzero(dag.arg1 >= 0)[::3]])
    native = sxhash.term_hashes(dag, nodes)
    saved = sxnative._state["lib"]
    sxnative._state["lib"] = False             # the NumPy passes
    try:
        numpy = sxhash.term_hashes(dag, nodes)
    finally:
        sxnative._state["lib"] = saved
    return native, numpy


def _equal(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("sx_")
                                        and n != "sx_call"))
def test_native_hashes_are_the_numpy_passes(name):
    assert _equal(*_both(build(name).nlp))


def test_native_hashes_on_an_acopf():
    from benchmarks.models.acopf import acopf_casadi_polar

    assert _equal(*_both(acopf_casadi_polar("case30_ieee")[0]))


def test_native_hashes_past_the_depth_and_size_limits():
    x = ca.SX.sym("x", 6)
    deep = x[0]
    for k in range(sxhash.MAX_DEPTH + 12):             # deeper than hashed
        deep = ca.sin(deep) * x[k % 6] + 0.5
    wide = x[0]
    for k in range(10):                               # a shared prefix: a large tree
        wide = wide * wide + x[k % 6]
    f = deep + ca.cos(wide) + x[1] ** 2.5
    native, numpy = _both({"x": x, "f": f, "g": ca.vertcat(deep - x[2], wide * x[3])})
    assert _equal(native, numpy)
    assert not numpy[1].all()                         # some terms not ok
