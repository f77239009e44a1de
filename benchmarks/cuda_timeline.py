"""Where a GPU solve's time goes on the device: a timeline of its kernels, copies,
memsets and synchronizations from CUPTI's activity records.

    CASPAR_TIMELINE=2000000 LD_PRELOAD=$(python -m benchmarks.cuda_counters build | tail -1) \\
        python benchmarks/bench_e2e.py case9241_pegase --device cuda --timeline FILE

The counters' library (``benchmarks/cuda_counters.py``, built where CUPTI is found)
keeps the rows when ``CASPAR_TIMELINE`` names a capacity (rows).  :func:`window` is the
rows of a host-side span (the device clock read at its start and end, :func:`now`);
:func:`summary` says, for that span and ``iterations``:

* ``wall_ms``; ``kernel_busy_ms``: the union of the kernels' intervals (the device
  doing something), ``kernels``, ``copies_dtoh``, ``syncs``;
* ``gaps_ms``: the idle time between consecutive device operations binned by length
  (< 2 us: the device's own back-to-back latency; 2-10 us: a launch not queued ahead of
  the device; 10-100 us and > 100 us: the host away -- Python, a read's round trip);
* ``top``: kernels by total time -- name, count, total ms, mean us;
* ``waits``: the gaps of 10 us or more by the pair of operations around them (the
  operation before, the one after: a kernel's name, or dtoh / copy / memset), by total
  time -- where the device waits on the host.
Per iteration: each figure divided by ``iterations``.
"""

from __future__ import annotations

import ctypes

import numpy as np

#: one row, as cuda_counters_cupti.c's TimelineRecord
ROW = np.dtype([("start", "<u8"), ("end", "<u8"), ("detail", "<u8"), ("what", "<u4"),
                ("stream", "<u4")])
WHAT = ("kernel", "dtoh", "copy", "memset", "sync")
GAP_BINS_US = (2.0, 10.0, 100.0)


def _lib():
    try:
        lib = ctypes.CDLL(None)
        lib.caspar_timeline_capacity
    except AttributeError:
        return None
    lib.caspar_timeline_capacity.restype = ctypes.c_size_t
    lib.caspar_timeline_now.restype = ctypes.c_uint64
    lib.caspar_timeline_read.restype = ctypes.c_size_t
    lib.caspar_timeline_read.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return lib


_LIB = _lib()


def available() -> bool:
    """True when the preloaded library keeps a timeline (CASPAR_TIMELINE set, CUPTI on)."""
    return _LIB is not None and _LIB.caspar_timeline_capacity() > 0


def now() -> int:
    """The device clock (ns) the rows are stamped in."""
    return int(_LIB.caspar_timeline_now())


def clear() -> None:
    _LIB.caspar_timeline_clear()


def rows() -> tuple[np.ndarray, int]:
    """(rows kept since the last :func:`clear`, rows offered -- more when it filled)."""
    cap = int(_LIB.caspar_timeline_capacity())
    out = np.zeros(cap, ROW)
    offered = int(_LIB.caspar_timeline_read(out.ctypes.data, cap))
    return out[:min(offered, cap)], offered


def _name(ptr: int) -> str:
    return ctypes.string_at(ptr).decode(errors="replace") if ptr else "?"


def _union_ms(start: np.ndarray, end: np.ndarray) -> float:
    if start.size == 0:
        return 0.0
    order = np.argsort(start, kind="stable")
    s, e = start[order].astype(np.int64), np.maximum.accumulate(end[order].astype(np.int64))
    # a new busy run starts where a start lies past every end before it
    new = np.ones(s.size, bool)
    new[1:] = s[1:] > e[:-1]
    run_start = s[new]
    run_end = np.append(e[np.flatnonzero(new)[1:] - 1], e[-1])
    return float((run_end - run_start).sum()) / 1e6


def summary(rec: np.ndarray, t0: int, t1: int, iterations: int, top: int = 25) -> dict:
    """The figures of the module docstring for the rows inside [t0, t1] (device ns)."""
    rec = rec[(rec["start"] >= t0) & (rec["end"] <= t1)]
    what = rec["what"]
    dev, kern, sync = rec[what != 4], rec[what == 0], rec[what == 4]
    it = max(int(iterations), 1)
    order = np.argsort(dev["start"], kind="stable")
    s, e = dev["start"][order].astype(np.int64), dev["end"][order].astype(np.int64)
    gaps = (s[1:] - np.maximum.accumulate(e)[:-1]) / 1e3 if s.size > 1 else np.zeros(0)
    # the idle gaps by length: bin b holds GAP_BINS_US[b - 1] <= gap < GAP_BINS_US[b]
    idle = gaps > 0
    b = np.searchsorted(GAP_BINS_US, gaps[idle], side="right")
    ms = np.bincount(b, weights=gaps[idle], minlength=4) / 1e3 / it
    count = np.bincount(b, minlength=4) / it
    binned = {lab: dict(ms=float(ms[k]), count=float(count[k]))
              for k, lab in enumerate(("<2us", "2-10us", "10-100us", ">100us"))}
    # the waits: the operations on either side of each gap of 10 us or more
    names: dict = {}

    def label(j):
        w, d = int(dev["what"][order[j]]), int(dev["detail"][order[j]])
        if w:
            return WHAT[w]
        if d not in names:
            names[d] = _name(d)
        return names[d][:60]

    waits: dict[tuple[str, str], list[float]] = {}
    for k in np.flatnonzero(gaps >= GAP_BINS_US[1]).tolist():
        waits.setdefault((label(k), label(k + 1)), []).append(float(gaps[k]))
    wait_table = sorted(waits.items(), key=lambda kv: -sum(kv[1]))
    # the kernels by total time: one row per kernel name pointer
    ptrs, inv = np.unique(kern["detail"], return_inverse=True)
    dur = (kern["end"] - kern["start"]).astype(np.float64)
    calls, total = np.bincount(inv, minlength=ptrs.size), np.bincount(
        inv, weights=dur, minlength=ptrs.size) / 1e6
    table = [(_name(int(ptrs[k])), int(calls[k]), float(total[k]))
             for k in np.argsort(-total, kind="stable")[:top]]
    return dict(
        iterations=int(iterations), wall_ms=(t1 - t0) / 1e6 / it,
        busy_ms=_union_ms(dev["start"], dev["end"]) / it,
        kernel_busy_ms=_union_ms(kern["start"], kern["end"]) / it,
        kernel_sum_ms=float(dur.sum()) / 1e6 / it,
        kernels=kern.size / it, copies_dtoh=int((what == 1).sum()) / it,
        copies_other=int((what == 2).sum()) / it, memsets=int((what == 3).sum()) / it,
        syncs=sync.size / it,
        sync_wait_ms=float((sync["end"] - sync["start"]).sum()) / 1e6 / it,
        gaps=binned,
        top=[dict(name=n[:120], count=c / it, total_ms=t / it, mean_us=1e3 * t / c)
             for n, c, t in table],
        waits=[dict(before=b_, after=a, count=len(g) / it, total_ms=sum(g) / 1e3 / it,
                    mean_us=sum(g) / len(g)) for (b_, a), g in wait_table[:top]])
