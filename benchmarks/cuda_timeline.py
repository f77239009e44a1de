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
    dev = rec[rec["what"] != 4]
    kern = rec[rec["what"] == 0]
    it = max(int(iterations), 1)
    order = np.argsort(dev["start"], kind="stable")
    s, e = dev["start"][order].astype(np.int64), dev["end"][order].astype(np.int64)
    ends = np.maximum.accumulate(e)
    gaps_all = (s[1:] - ends[:-1]) / 1e3 if s.size > 1 else np.zeros(0)
    gaps = gaps_all[gaps_all > 0]
    label = [WHAT[w] if w else _name(d) for w, d in zip(dev["what"][order].tolist(),
                                                       dev["detail"][order].tolist())]
    waits: dict[tuple[str, str], list[float]] = {}
    for k in np.flatnonzero(gaps_all >= GAP_BINS_US[1]).tolist():
        waits.setdefault((label[k][:60], label[k + 1][:60]), []).append(gaps_all[k])
    wait_table = sorted(waits.items(), key=lambda kv: -sum(kv[1]))
    edges = (0.0, *GAP_BINS_US, np.inf)
    labels = ("<2us", "2-10us", "10-100us", ">100us")
    binned = {lab: dict(ms=float(gaps[(gaps >= lo) & (gaps < hi)].sum()) / 1e3 / it,
                        count=int(((gaps >= lo) & (gaps < hi)).sum()) / it)
              for lab, lo, hi in zip(labels, edges[:-1], edges[1:])}
    names: dict[str, list[float]] = {}
    for ptr, d in zip(kern["detail"].tolist(), (kern["end"] - kern["start"]).tolist()):
        names.setdefault(ptr, []).append(d)
    table = sorted(((_name(p), len(d), sum(d) / 1e6) for p, d in names.items()),
                   key=lambda r: -r[2])
    per_it = lambda v: v / it  # noqa: E731
    wall = (t1 - t0) / 1e6
    return dict(
        iterations=int(iterations), wall_ms=per_it(wall),
        busy_ms=per_it(_union_ms(dev["start"], dev["end"])),
        kernel_busy_ms=per_it(_union_ms(kern["start"], kern["end"])),
        kernel_sum_ms=per_it(float((kern["end"] - kern["start"]).sum()) / 1e6),
        kernels=per_it(kern.size), copies_dtoh=per_it(int((rec["what"] == 1).sum())),
        copies_other=per_it(int((rec["what"] == 2).sum())),
        memsets=per_it(int((rec["what"] == 3).sum())),
        syncs=per_it(int((rec["what"] == 4).sum())),
        sync_wait_ms=per_it(float((rec[rec["what"] == 4]["end"]
                                   - rec[rec["what"] == 4]["start"]).sum()) / 1e6),
        gaps=binned,
        top=[dict(name=n[:120], count=c / it, total_ms=per_it(t), mean_us=1e3 * t / c)
             for n, c, t in table[:top]],
        waits=[dict(before=b, after=a, count=len(g) / it, total_ms=sum(g) / 1e3 / it,
                    mean_us=sum(g) / len(g)) for (b, a), g in wait_table[:top]])
