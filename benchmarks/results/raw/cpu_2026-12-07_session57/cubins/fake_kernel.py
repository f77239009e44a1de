"""A cubin built on the VM (vm_build.py) launched through CuPy in place of numba-cuda's
compiled kernel: ``install(launch_module, cubin, meta)`` makes the tree's
``launch.kernel(columns)`` return a :class:`Launcher`, so the tree's own
``solve_on_device`` (grid, block, shared memory, workspaces, results) runs unchanged and
no kernel is compiled on the device.

Numba's kernel ABI (every parameter 64-bit in the PTX): an array argument of ndim d is
(meminfo, parent, nitems, itemsize, data, shape[0..d-1], strides[0..d-1]) -- meminfo
and parent null for device arrays -- and an int64 scalar is itself."""
from __future__ import annotations

import cupy as cp
import numpy as np


def flatten(args) -> list:
    """The kernel's parameters for the launch's arguments (module doc)."""
    out = []
    for a in args:
        if isinstance(a, cp.ndarray):
            out += [np.uint64(0), np.uint64(0), np.int64(a.size), np.int64(a.itemsize),
                    np.uint64(a.data.ptr)]
            out += [np.int64(s) for s in a.shape] + [np.int64(s) for s in a.strides]
        elif isinstance(a, (int, np.integer)):
            out.append(np.int64(a))
        else:
            raise TypeError(f"cannot pass {type(a).__name__} to the cubin")
    return out


class Launcher:
    """``launcher[grid, block(, stream, shared)](*args)`` as a numba kernel is called."""

    def __init__(self, function, params: int):
        self.function, self.params = function, params

    def __getitem__(self, config):
        grid, block = int(config[0]), int(config[1])
        shared = int(config[3]) if len(config) > 3 else 0
        if shared > 48 * 1024:
            self.function.max_dynamic_shared_size_bytes = shared

        def call(*args):
            flat = flatten(args)
            if len(flat) != self.params:
                raise ValueError(f"{len(flat)} parameters for a kernel of {self.params}")
            self.function((grid,), (block,), tuple(flat), shared_mem=shared)
        return call


def install(launch, cubin_path, meta) -> Launcher:
    """``launch.kernel`` answers the cubin's :class:`Launcher` for rows (columns: error)."""
    module = cp.RawModule(path=str(cubin_path))
    launcher = Launcher(module.get_function(meta["entry"]), meta["params"])

    def kernel(columns):
        if columns:
            raise ValueError("the cubins hold the rows kernel")
        return launcher
    launch.kernel = kernel
    return launcher
