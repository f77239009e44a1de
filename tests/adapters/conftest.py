"""Fixtures shared by the front-end tests."""

from __future__ import annotations

import pytest

from caspar_backend.problem import Problem


@pytest.fixture
def spy(monkeypatch):
    """The batch sizes of every ``Problem.solve_batch`` call (the test proves that the
    batched path was taken)."""
    sizes = []
    orig = Problem.solve_batch

    def wrapped(self, *a, **k):
        res = orig(self, *a, **k)
        sizes.append(len(res))
        return res

    monkeypatch.setattr(Problem, "solve_batch", wrapped)
    return sizes
