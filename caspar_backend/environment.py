"""The environment variables caspar reads: one :class:`Variable` per name in
:data:`VARIABLES`, each read where it acts (the module in ``where``, by its own rule).

This table is their reference: ``tests/test_environment.py`` checks that every variable
the sources read is in it and that README's "Environment variables" table lists the
same names.  Nothing here is imported by the solver (``import caspar_backend`` stays
cheap).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    """Final.  ``name``; ``values`` it takes; ``default`` when unset; ``meaning``; the
    module(s) reading it (``where``, relative to the repository root)."""

    name: str
    values: str
    default: str
    meaning: str
    where: tuple


VARIABLES = (
    Variable("CASPAR_CACHE_DIR", "a folder", "~/.cache/caspar",
             "where what caspar builds once per machine is kept: compiled CPU kernels, "
             "CUDA kernels (prebuilt, pattern and extern kernels), the CasADi problem "
             "cache, cuDSS orderings",
             ("caspar_backend/cache_dir.py",)),
    Variable("CASPAR_BACKGROUND_COMPILE", "0, 1", "1",
             "1: kernels not yet compiled on this machine compile in a detached process "
             "while the general path (single solves) and the lockstep path (batches) "
             "serve; 0: no detached process -- the CUDA batch kernel and a layout's "
             "pattern kernel compile in the calling process at first use, the CPU "
             "kernels only by `caspar warmup`",
             ("caspar_backend/compiled/dispatch.py",)),
    Variable("CASPAR_CUDA_PATTERNS", "0, 1", "1",
             "1: a GPU batch runs the kernel linked with code generated for its layout "
             "once that is built (the same answers, faster); 0: always the default "
             "kernel",
             ("caspar_backend/compiled/cuda/patterns.py",)),
    Variable("CASPAR_CUDA_LANES", "1, 2, 4, 8, 16, 32", "the launch rule's choice",
             "GPU threads per instance of a batch launch (an experiment's override)",
             ("caspar_backend/compiled/cuda/group.py",)),
    Variable("CASPAR_CUDSS_ORDERINGS", "0, 1", "0",
             "1: keep cuDSS's fill-reducing ordering of a KKT pattern for later analyses "
             "(docs/cudss.md: off, it slows cuDSS 1.0's factorization)",
             ("caspar_backend/linsolve/cudss_ordering.py",)),
    Variable("CASPAR_LSQ_COMPILED", "0, 1", "1",
             "0: the least-squares DENSE_SCHUR elimination by SciPy's BSR products "
             "instead of the compiled loops (the same system up to rounding)",
             ("caspar_backend/lsq/schur.py",)),
    Variable("CASPAR_PROBLEM_CACHE", "0/false/no/off, or anything else", "on",
             "off: a CasADi SX problem is read and compiled again in every process "
             "instead of loaded from the cache",
             ("adapters/casadi/problem_cache.py",)),
    Variable("caspar_options", "IPOPT-style `name=value` words", "none",
             "the AMPL driver's options (the `<solver>_options` convention), before the "
             "command line's",
             ("caspar_backend/ampl/driver.py",)),
    Variable("CUDA_HOME", "a CUDA toolkit folder", "/usr/local/cuda",
             "the toolkit whose NVVM, libdevice and ptxas build the CUDA kernels without "
             "a GPU (`caspar warmup --cuda-arch`)",
             ("caspar_backend/compiled/cuda/offline.py",)),
    Variable("CUDSS_THREADING_LIB", "a shared library", "the cuDSS wheel's OpenMP layer",
             "cuDSS's own: its host threading layer",
             ("caspar_backend/linsolve/cudss.py",)),
    Variable("CXX", "a C++ compiler", "c++, g++, clang++ (the first found)",
             "the compiler of the CasADi loader built once per machine",
             ("adapters/casadi/casadi_loader.py",)),
)
