"""Benchmark: what one launch costs the host, and what a CUDA graph replay of the same
launches costs -- the figures that decide how an iteration's "other" time is cut.

    python benchmarks/bench_launch.py [--device cuda] [--n 100000] [--calls 2000] [--chain 40]

Per way of issuing work, the host time per operation with the device left to run behind
(no synchronization inside the timed loop; the device time of the whole loop, waited for
after it, is reported apart):

* ``fused_axpy``: ``caspar_backend.arrays.fused.call(xp, 'axpy', a, x, y)`` -- one
  elementwise kernel of the interior point's fused module;
* ``fused_reduction``: ``fused.call(xp, 'amax_abs2', x, y)`` -- a reduction returning 0-d
  arrays (one result allocation each);
* ``cupy_inplace``: ``y += x`` -- a CuPy elementwise kernel;
* ``cupy_empty``: ``xp.empty(())`` -- a memory pool allocation, no launch;
* ``graph_replay``: ``--chain`` fused axpy launches captured once on a stream as a CUDA
  graph, then the graph launched ``--calls / --chain`` times: host time per captured
  operation (the device work is the same as ``fused_axpy``'s).

``--device cpu`` times the NumPy references instead (no graph).  Prints one JSON line
prefixed ``LAUNCH``: per operation ``host_us`` and ``device_us`` (cuda), and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _timed(xp, calls, step, sync):
    """(host us per call, device-inclusive us per call) of ``calls`` calls of ``step``."""
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        step()
    t1 = time.perf_counter()
    sync()
    t2 = time.perf_counter()
    return 1e6 * (t1 - t0) / calls, 1e6 * (t2 - t0) / calls


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    ap.add_argument("--n", type=int, default=100_000, help="vector length")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--chain", type=int, default=40, help="launches in the captured graph")
    a = ap.parse_args(argv)

    import numpy as np

    from caspar_backend.arrays import fused

    if a.device == "cuda":
        import cupy as xp

        def sync():
            xp.cuda.get_current_stream().synchronize()
    else:
        xp = np

        def sync():
            pass
    x, y = xp.ones(a.n), xp.zeros(a.n)

    def axpy():
        fused.call(xp, "axpy", 1e-9, x, y)

    def reduction():
        fused.call(xp, "amax_abs2", x, y)

    def inplace():
        y.__iadd__(x)

    def empty():
        xp.empty(())

    steps = dict(fused_axpy=axpy, fused_reduction=reduction, cupy_inplace=inplace,
                 cupy_empty=empty)
    out = dict(device=a.device, n=a.n, calls=a.calls, machine=platform.processor()
               or platform.machine())
    for name, step in steps.items():
        step()                      # compile / warm the kernel outside the timing
        host, total = _timed(xp, a.calls, step, sync)
        out[name] = dict(host_us=host, device_us=total)
    if a.device == "cuda":
        out["graph_replay"] = _graph_replay(xp, a, axpy, sync)
    print("LAUNCH " + json.dumps(out), flush=True)
    return out


def _graph_replay(xp, a, axpy, sync) -> dict:
    """``--chain`` axpy launches captured on a non-blocking stream, replayed."""
    stream = xp.cuda.Stream(non_blocking=True)
    try:
        with stream:
            axpy()
            stream.synchronize()
            stream.begin_capture()
            for _ in range(a.chain):
                axpy()
            graph = stream.end_capture()
            graph.upload(stream)
            replays = max(1, a.calls // a.chain)
            host, total = _timed(xp, replays, lambda: graph.launch(stream),
                                 stream.synchronize)
    except Exception as exc:        # a CuPy without capture, a driver that refuses it
        return dict(error=f"{type(exc).__name__}: {exc}")
    sync()
    return dict(host_us=host / a.chain, device_us=total / a.chain, chain=a.chain)


if __name__ == "__main__":
    main()
