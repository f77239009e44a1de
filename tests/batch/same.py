"""``assert_identical``: two BatchResults that agree bit for bit."""

from __future__ import annotations

import numpy as np

#: the per-instance arrays and lists a batch result carries
ARRAYS = ("x", "f", "g", "lam_g", "lam_x", "iterations")
LISTS = ("status", "message", "path", "reason")


def assert_identical(res, ref, rows=slice(None)) -> None:
    """Every per-instance field of ``res`` equals rows ``rows`` of ``ref`` exactly (NaN
    equal to NaN): the same bits, not merely close."""
    for k in ARRAYS:
        a, b = getattr(res, k), getattr(ref, k)[rows]
        assert a.shape == b.shape and a.dtype == b.dtype, k
        bad = np.flatnonzero(~np.all((a == b) | (np.isnan(a) & np.isnan(b))
                                     if a.dtype.kind == "f" else a == b,
                                     axis=tuple(range(1, a.ndim))))
        assert bad.size == 0, (k, bad[:10], a[bad[:3]], b[bad[:3]])
    for k in LISTS:
        assert getattr(res, k) == list(np.asarray(getattr(ref, k), dtype=object)[rows]), k
