""":func:`caspar_backend.arrays.distinct` is ``numpy.unique`` (values, dtype, order) for
integer and boolean arrays of any shape, by one sort; other dtypes are ``numpy.unique``'s."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.arrays import distinct


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int8, bool])
@pytest.mark.parametrize("size", [0, 1, 2, 7, 1000])
def test_distinct_is_numpy_unique(dtype, size):
    rng = np.random.default_rng(size)
    a = rng.integers(-50 if np.dtype(dtype).kind == "i" else 0, 60, size).astype(dtype)
    got, want = distinct(a), np.unique(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_distinct_flattens_and_leaves_its_input_alone():
    a = np.array([[3, 1, 3], [2, 1, 0]], np.int64)
    before = a.copy()
    np.testing.assert_array_equal(distinct(a), [0, 1, 2, 3])
    np.testing.assert_array_equal(a, before)


def test_distinct_of_floats_keeps_numpys_nan_rule():
    a = np.array([1.0, np.nan, 0.5, np.nan, 1.0])
    np.testing.assert_array_equal(distinct(a), np.unique(a))    # one NaN, last
