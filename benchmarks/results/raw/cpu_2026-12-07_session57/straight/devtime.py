"""Kernel timing for the GPU scripts of this folder: CUDA events around each launch."""
import cupy as cp
import numpy as np


def timed(fn, grid, block, args, shared=0, reps=6):
    """(median ms of launches 2..reps, the first launch's ms)."""
    ms = []
    for _ in range(reps):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record()
        fn(grid, block, args, shared_mem=shared)
        e1.record()
        e1.synchronize()
        ms.append(cp.cuda.get_elapsed_time(e0, e1))
    return float(np.median(ms[1:])), ms[0]
