"""Array kernels of the bulk SX reader's grouping and merge check in C++
(``sxkernels_native.cpp``): loops over a bucket's (positions x instances) matrices
(:mod:`.sxgroup`) and over the spines' items (:mod:`.sxmerge`) that replace several
NumPy passes each -- gathers, sorts and ``np.unique`` calls over arrays as long as the
program -- with the same results bit for bit.

Built and loaded like :mod:`.sxwalks_native` (once per machine with the C++ compiler
that builds caspar's casadi loader, :func:`.casadi_loader.build`; ``caspar warmup``
builds it); :func:`.sxdag.native` hands this module out where it can be had, and the
callers keep their NumPy passes for where it cannot.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np

from .casadi_loader import NativeLibrary

from .sxwalks_native import _c

SOURCE = Path(__file__).with_name("sxkernels_native.cpp")
LIBRARY = "libcaspar_sx_kernels" + (".dylib" if sys.platform == "darwin" else ".so")

_P, _I = ctypes.c_void_p, ctypes.c_int64
#: ctypes signatures: (restype, argtypes)
_SIGNATURES = {
    "caspar_first_occurrence": (None, [_I, _I, _P, _P, _P]),
    "caspar_first_occurrence_of": (None, [_I, _I, _P, _P, _P, _P]),
    "caspar_gather_positions": (None, [_I, _I] + [_P] * 10),
    "caspar_distinct_columns": (_I, [_I, _I, _P, _P, _P]),
    "caspar_repeated": (None, [_I, _P, _P]),
    "caspar_merge_signatures": (_I, [_I, _P, _P, _I, _P, _P, _I] + [_P] * 14),
    "caspar_expand_items": (_I, [_I] + [_P] * 15 + [_I, _I] + [_P] * 9),
    "caspar_sharing_counts": (None, [_I, _I] + [_P] * 9 + [ctypes.c_uint64] + [_P] * 5),
}
_native = NativeLibrary(SOURCE, LIBRARY, _SIGNATURES)


def library():
    """The ctypes library (built if missing), or None where it cannot be built."""
    return _native.get()


def first_occurrence(V):
    """``(F, differs)``: :func:`.sxgroup._first_occurrence` of the (L, N) uint64 ``V``
    (int64 (L, N)) and bool (N,) where a column of F is not the first."""
    V = _c(V, np.uint64)
    L, N = V.shape
    F = np.empty((L, N), np.int64)
    differs = np.empty(N, np.bool_)
    library().caspar_first_occurrence(L, N, V.ctypes.data, F.ctypes.data,
                                      differs.ctypes.data)
    return F, differs


def first_occurrence_of(M, vh):
    """:func:`first_occurrence` of ``vh[M]`` (M int64 (L, N) node ids, vh uint64),
    without making that matrix."""
    M, vh = _c(M, np.int64), _c(vh, np.uint64)
    L, N = M.shape
    F = np.empty((L, N), np.int64)
    differs = np.empty(N, np.bool_)
    library().caspar_first_occurrence_of(L, N, M.ctypes.data, vh.ctypes.data,
                                         F.ctypes.data, differs.ctypes.data)
    return F, differs


def gather_positions(parent, arg, rep, a0, a1, op, leaf, first):
    """``(M, bad)``: :func:`.sxgroup._gather` (rows below a missing argument -1) and the
    op and leaf comparison of :func:`.sxgroup._mismatch`, in one pass per position."""
    parent, arg, rep = _c(parent, np.int64), _c(arg, np.int64), _c(rep, np.int64)
    arrays = [_c(a0, np.int64), _c(a1, np.int64), _c(op, np.int64), _c(leaf, np.int8),
              _c(first, np.int64)]
    L, N = parent.size, arrays[-1].size
    M = np.empty((L, N), np.int64)
    bad = np.empty(N, np.bool_)
    library().caspar_gather_positions(L, N, parent.ctypes.data, arg.ctypes.data,
                                      rep.ctypes.data, *[x.ctypes.data for x in arrays],
                                      M.ctypes.data, bad.ctypes.data)
    return M, bad


def distinct_columns(X):
    """``(first, inv)``: the first column of each distinct column of the (R, N) int64
    ``X``, in order of first occurrence, and each column's index among them."""
    X = _c(X, np.int64)
    R, N = X.shape
    first, inv = np.empty(N, np.int64), np.empty(N, np.int64)
    P = library().caspar_distinct_columns(R, N, X.ctypes.data, first.ctypes.data,
                                          inv.ctypes.data)
    return first[:P], inv


def repeated(key):
    """bool: where each uint64 ``key`` equals another one."""
    key = _c(key, np.uint64)
    twice = np.empty(key.size, np.bool_)
    library().caspar_repeated(key.size, key.ctypes.data, twice.ctypes.data)
    return twice


def merge_signatures(op, leaf, leaf_const, vh, hashed, top_id, t_node, t_par, t_dist,
                     head, walked, spine, scaled, top_of, span, S_of, c_of):
    """:func:`.sxmerge.merge_candidates`' ``(candidates, n_items)`` from its inputs
    (``head``: the chain heads, :func:`.sxchains.sum_chains`), or None where the items
    do not come grouped by tree in tour order (the NumPy passes then)."""
    K = op.size
    arrays = [_c(op, np.int64), _c(leaf, np.int8)]
    rest = [_c(vh, np.uint64), _c(hashed, np.bool_)]
    items = [_c(top_id, np.int64), _c(t_node, np.int64), _c(t_par, np.bool_),
             _c(t_dist, np.int64)]
    flags = [_c(head, np.int64), _c(walked, np.bool_), _c(spine, np.bool_),
             _c(scaled, np.bool_),
             _c(top_of, np.int64), _c(span, np.int64), _c(S_of, np.int64),
             _c(c_of, np.float64)]
    out, n_items = np.empty(K, np.bool_), np.empty(K, np.int64)
    ok = library().caspar_merge_signatures(
        K, *[x.ctypes.data for x in arrays], int(leaf_const),
        *[x.ctypes.data for x in rest], items[0].size, *[x.ctypes.data for x in items],
        *[x.ctypes.data for x in flags], out.ctypes.data, n_items.ctypes.data)
    return (out, n_items) if ok else None


def sharing_counts(root, node, wrap, c, split, ops_of, first_nl, hashed, vh, R, wrap_mul):
    """``(total, n_terms, pos_total, term_total, distinct)`` of
    :func:`.sxsharing.sharing_allows` over the split instances, per root (R): float64,
    int64, float64, float64, int64 (its bincounts and first-occurrence passes in one
    loop)."""
    arrays = [_c(root, np.int64), _c(node, np.int64), _c(wrap, np.int8), _c(c, np.float64),
              _c(split, np.bool_), _c(ops_of, np.int64), _c(first_nl, np.int64),
              _c(hashed, np.bool_), _c(vh, np.uint64)]
    total, pos_total, term_total = np.empty(R), np.empty(R), np.empty(R)
    n_terms, distinct = np.empty(R, np.int64), np.empty(R, np.int64)
    library().caspar_sharing_counts(
        arrays[0].size, R, *[x.ctypes.data for x in arrays], int(wrap_mul),
        total.ctypes.data, n_terms.ctypes.data, pos_total.ctypes.data,
        term_total.ctypes.data, distinct.ctypes.data)
    return total, n_terms, pos_total, term_total, distinct


def expand_items(lvl, dist, starts, n_in, s_sorted, items, div_of, c_of, mul, div):
    """:func:`.sxterms._expand`'s rows ``(node, par, wrap, cc, k1, k2, host, root,
    outer)`` in one loop: ``lvl`` the first-level items' (root, node, par, k1, host),
    ``items`` the tour's (node, par, dist, host)."""
    lr, ln, lp, lk, lh = lvl
    lr, ln, lk, lh = (_c(x, np.int64) for x in (lr, ln, lk, lh))
    lp, dist = _c(lp, np.bool_), _c(dist, np.bool_)
    starts, n_in, s_sorted = (_c(x, np.int64) for x in (starts, n_in, s_sorted))
    tn, tp, td, th = items
    tn, td, th, tp = _c(tn, np.int64), _c(td, np.int64), _c(th, np.int64), _c(tp, np.bool_)
    div_of, c_of = _c(div_of, np.bool_), _c(c_of, np.float64)
    n = int(ln.size - int(dist.sum()) + int(n_in.sum()))
    node, k1, k2, host, root = (np.empty(n, np.int64) for _ in range(5))
    par, outer, wrap, cc = np.empty(n, np.bool_), np.empty(n, np.bool_), \
        np.empty(n, np.int8), np.empty(n)
    library().caspar_expand_items(
        ln.size, *[x.ctypes.data for x in (lr, ln, lp, lk, lh, dist, starts, n_in, s_sorted,
                                           tn, tp, td, th, div_of, c_of)], int(mul), int(div),
        *[x.ctypes.data for x in (node, par, wrap, cc, k1, k2, host, root, outer)])
    return node, par, wrap, cc, k1, k2, host, root, outer
