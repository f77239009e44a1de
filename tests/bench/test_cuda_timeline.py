"""benchmarks/cuda_timeline.summary on hand-made rows: busy time is the union of the
device's intervals, idle gaps are binned by length and attributed to the operations
around them, kernels are tabled by total time."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import cuda_timeline as tl


def _rows(spec):
    """spec: (start ns, end ns, what, detail) per row."""
    r = np.zeros(len(spec), tl.ROW)
    for k, (s, e, w, d) in enumerate(spec):
        r[k] = (s, e, d, w, 0)
    return r


def test_busy_is_the_union_and_gaps_are_binned():
    rec = _rows([(0, 1_000, 0, 0),            # kernel
                 (500, 1_500, 0, 0),          # overlaps the first: busy 0..1500
                 (2_500, 3_000, 1, 8),        # dtoh after a 1 us gap
                 (8_000, 9_000, 0, 0),        # 5 us gap
                 (59_000, 60_000, 2, 8),      # 50 us gap
                 (260_000, 261_000, 3, 8),    # 200 us gap
                 (1_000, 250_000, 4, 1)])     # a synchronization: not device work
    s = tl.summary(rec, 0, 300_000, iterations=2)
    assert s["busy_ms"] == pytest.approx((1_500 + 500 + 1_000 + 1_000 + 1_000) / 1e6 / 2)
    assert s["kernel_busy_ms"] == pytest.approx((1_500 + 1_000) / 1e6 / 2)
    assert s["kernels"] == 1.5 and s["copies_dtoh"] == 0.5 and s["syncs"] == 0.5
    assert [s["gaps"][k]["count"] for k in ("<2us", "2-10us", "10-100us", ">100us")] \
        == [0.5, 0.5, 0.5, 0.5]
    assert s["gaps"][">100us"]["ms"] == pytest.approx(0.2 / 2)
    waits = {(w["before"], w["after"]): w["mean_us"] for w in s["waits"]}
    assert waits == {("copy", "memset"): pytest.approx(200.0),
                     ("?", "copy"): pytest.approx(50.0)}
    assert s["wall_ms"] == pytest.approx(0.3 / 2)


def test_rows_outside_the_window_are_left_out():
    rec = _rows([(0, 10, 0, 0), (100, 200, 0, 0), (900, 1_100, 0, 0)])
    s = tl.summary(rec, 50, 1_000, iterations=1)
    assert s["kernels"] == 1 and s["kernel_sum_ms"] == pytest.approx(1e-4)
