"""The compiled path's workspace layouts found by content: a small problem read again as
another Problem object (casadi's Opti built per solve: new symbols, the same model) gets
the layout of the first, which is the layout it would build; another constant, another
bound structure or a larger problem builds its own."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi import from_casadi  # noqa: E402
from caspar_backend.compiled import solve as cs  # noqa: E402
from caspar_backend.compiled.workspace_layout import WorkspaceLayout  # noqa: E402


def _problem(c=2.0):
    x = ca.MX.sym("x", 3)          # MX: every read is a new Problem (no twin)
    return from_casadi({"x": x, "f": ca.sumsqr(x - c), "g": x[0] * x[1] + x[2]})


BOUNDS = (np.full(3, -5.0), np.full(3, 5.0), np.array([1.0]), np.array([1.0]))


def _same(a, b):
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("Ib", "IO", "Fb0", "FO"))


def test_the_same_model_read_again_finds_its_layout():
    first, again = _problem(), _problem()
    assert first.structure_key is not again.structure_key
    lay = cs.layout_for(first, *BOUNDS)
    assert cs.layout_for(again, *BOUNDS) is lay
    assert _same(lay, WorkspaceLayout(again, *BOUNDS))          # what it would build
    r1, r2 = (p.solve(x0=[0.5] * 3, lbx=BOUNDS[0], ubx=BOUNDS[1], lbg=BOUNDS[2],
                      ubg=BOUNDS[3], print_level=0) for p in (first, again))
    assert (r1.status, r1.iterations, r1.f) == (r2.status, r2.iterations, r2.f)


def test_another_constant_bound_structure_or_size_builds_its_own(monkeypatch):
    lay = cs.layout_for(_problem(), *BOUNDS)
    assert cs.layout_for(_problem(c=3.0), *BOUNDS) is not lay
    free_g = (BOUNDS[0], BOUNDS[1], np.array([-np.inf]), np.array([1.0]))
    assert cs.layout_for(_problem(), *free_g) is not lay
    monkeypatch.setattr(cs, "CONTENT_MAX_SIZE", 3)
    assert cs.layout_for(_problem(), *BOUNDS) is not lay
