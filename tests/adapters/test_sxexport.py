"""The instruction arrays read through casadi's C++ API (adapters/casadi/sxexport.py) are
the text decoder's, field for field, on the SX corpus, an AC-OPF and a program with
OP_CONSTPOW; a call falls back to the text path (which gives None); the problem cache
key follows the program (a changed constant is another key)."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi import problem_cache, sxdecode, sxexport  # noqa: E402
from caspar_backend.adapters.casadi.nlp import problem_function  # noqa: E402

from tests.support.casadi_corpus import CASES, build  # noqa: E402

SX_CASES = sorted(n for n in CASES if n.startswith("sx_"))
FIELDS = ("op", "w", "a", "b", "idx", "nz", "value")

pytestmark = pytest.mark.skipif(sxexport.library() is None,
                                reason="no C++ compiler for the export library")


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=k == "value")
               for k in FIELDS)


@pytest.mark.parametrize("name", SX_CASES)
def test_direct_read_is_the_text_decoders(name):
    fn = problem_function(build(name).nlp)
    direct, text = sxexport.read(fn), sxdecode.decode(fn)
    if name == "sx_call":               # a call: neither path reads it
        assert direct is None and text is None
        assert sxexport.program(fn) is None
        return
    assert direct is not None and text is not None and _same(direct, text)


def test_constpow_reads_as_the_text_decoder_reads_it():
    x = ca.SX.sym("x", 3)
    f = ca.sum1(x ** 2.5) + x[0] ** x[1] + ca.sqrt(x[2]) + 2 * x[1] - 0.0
    fn = problem_function({"x": x, "f": f, "g": ca.vertcat(-x[0] * 0.5, x[1] / 3.0)})
    ops = {fn.instruction_id(k) for k in range(fn.n_instructions())}
    assert ca.OP_CONSTPOW in ops
    direct = sxexport.read(fn)
    assert direct is not None and _same(direct, sxdecode.decode(fn))


def test_acopf_direct_read_is_the_text_decoders():
    from benchmarks.models.acopf import acopf_casadi_polar

    nlp, _ = acopf_casadi_polar("case14_ieee")
    fn = problem_function(nlp)
    assert _same(sxexport.read(fn), sxdecode.decode(fn))


def test_cache_key_follows_the_program():
    x = ca.SX.sym("x", 4)

    def key(c):
        fn = problem_function({"x": x, "f": ca.sumsqr(x - c) + x[0] * c})
        sp = [x.sparsity()]
        return (problem_cache.program_key(sxexport.read(fn), sp, {}),
                problem_cache.program_key(sxdecode.program_text(fn), sp, {}))

    a, b, c = key(1.5), key(1.5), key(-1.5)
    assert a == b and a[0] != c[0] and a[1] != c[1] and a[0] != a[1]


def test_threaded_read_is_the_text_decoders(monkeypatch):
    monkeypatch.setattr(sxexport, "THREADED_MIN", 0)
    monkeypatch.setattr(sxexport, "_cpus", lambda: 3)       # ranges of uneven length
    x = ca.SX.sym("x", 50)
    f = ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2)
    fn = problem_function({"x": x, "f": f, "g": ca.sin(x[1:]) * x[:-1] - 2.5})
    assert _same(sxexport.read(fn), sxdecode.decode(fn))
