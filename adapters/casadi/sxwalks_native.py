"""The bulk SX reader's walks in C++ (``sxwalks_native.cpp``): the functions of
:mod:`.sxwalks` (Numba) with the same arguments and results, bit for bit.

The Numba loops pay a start in every fresh process (Numba's import and its cached
machine code: 0.5-1.5 s, measured 1.0-1.3 s at 8 * 10^6 instructions), which is why
programs below :data:`.bulk.COMPILED_MIN_INSTRUCTIONS` walked the DAG by NumPy passes
(:mod:`.sxwalks_numpy`: one pass per tree level, pointer jumping, list ranking; 0.4-0.5 s
of tree hashing alone on SX polar case9241).  This library is built once per machine
with the C++ compiler that builds caspar's casadi loader (:func:`.casadi_loader.build`,
cached under ``$CASPAR_CACHE_DIR/casadi``) and loads by ctypes in about a millisecond,
so :func:`.sxdag.walks` takes it for programs of every size where it can be had; the
Numba loops and the NumPy passes remain the paths without a compiler.

Arguments go to C++ as contiguous arrays of the loops' types (converted where they are
not, which copies); the arrays :func:`hash_trees` updates in place must be so already.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np

from .casadi_loader import NativeLibrary

SOURCE = Path(__file__).with_name("sxwalks_native.cpp")
LIBRARY = "libcaspar_sx_walks" + (".dylib" if sys.platform == "darwin" else ".so")

_P, _I = ctypes.c_void_p, ctypes.c_int64
#: ctypes signatures: (restype, argtypes)
_SIGNATURES = {
    "caspar_hash_trees": (None, [_I] + [_P] * 4 + [_I] + [_P] * 6 + [_I] * 3 + [_P] * 2),
    "caspar_chain_heads": (None, [_I, _P, _P, _P]),
    "caspar_single_writes": (_I, [_I] + [_P] * 5),
    "caspar_first_of_each": (_I, [_I, _P, _P]),
    "caspar_claims_hold": (_I, [_P] * 7 + [_I, _I, _P, _P]),
    "caspar_program_uses": (None, [_I, _P, _P, _I, _P, _P]),
    "caspar_plain": (_I, [_I] + [_P] * 8 + [_I, _I, _P, _I, _P]),
    "caspar_sum_chains": (None, [_I] + [_P] * 4 + [_I, _I, _P, _P]),
    "caspar_scaled": (None, [_I, _P, _P, _P, _P, _I] + [_P] * 7),
    "caspar_dag_nodes": (None, [_I, _P, _P, _P, _I] + [_P] * 7),
    "caspar_spine_refs": (_I, [_I] + [_P] * 6 + [_I, _P, _I, _I] + [_P] * 6),
    "caspar_leaf_hashes": (None, [_I] + [_P] * 8),
    "caspar_term_hashes": (None, [_I] + [_P] * 4 + [_I] + [_P] * 7 + [_I] * 3 + [_P] * 4),
    "caspar_spine_reach": (_I, [_I] + [_P] * 4 + [_I, _P, _I] + [_P] * 6 + [_I, _P]),
    "caspar_hash_flags": (None, [_I, _P, _I, _P, _P, _P, _I, _I, _P, _P]),
    "caspar_spine_tour": (_I, [_I, _P, _P, _P, _P, _I, _P, _I, _P, _I, _I, _I] + [_P] * 7),
}
_native = NativeLibrary(SOURCE, LIBRARY, _SIGNATURES)


def library():
    """The ctypes library (built if missing), or None where it cannot be built."""
    return _native.get()


def _c(a, dtype) -> np.ndarray:
    return np.ascontiguousarray(a, dtype)


def fits(*arrays_and_types) -> bool:
    """Whether each ``(array, dtype)`` pair is a contiguous array of that dtype."""
    return all(isinstance(a, np.ndarray) and a.dtype == t and a.flags.c_contiguous
               for a, t in arrays_and_types)


def hash_trees(op, a0, a1, leaf, not_leaf, h, vh, size, bake, bits, roots, max_depth,
               big):
    """:func:`.sxwalks.hash_trees`; ``h``, ``vh`` (uint64) and ``size`` (int64)
    contiguous (else the NumPy passes run)."""
    if not fits((h, np.uint64), (vh, np.uint64), (size, np.int64)):
        from . import sxwalks_numpy

        return sxwalks_numpy.hash_trees(op, a0, a1, leaf, not_leaf, h, vh, size, bake,
                                        bits, roots, max_depth, big)
    K = op.size
    op, a0, a1 = _c(op, np.int64), _c(a0, np.int64), _c(a1, np.int64)
    leaf, bake, bits = _c(leaf, np.int8), _c(bake, np.bool_), _c(bits, np.uint64)
    roots = _c(roots, np.int64)
    inner = np.empty(K, np.bool_)
    height = np.empty(K, np.int64)
    library().caspar_hash_trees(
        K, op.ctypes.data, a0.ctypes.data, a1.ctypes.data, leaf.ctypes.data, int(not_leaf),
        h.ctypes.data, vh.ctypes.data, size.ctypes.data, bake.ctypes.data, bits.ctypes.data,
        roots.ctypes.data, roots.size, int(max_depth), int(big), inner.ctypes.data,
        height.ctypes.data)
    return inner, height


def chain_heads(user, fused):
    """:func:`.sxwalks.chain_heads`."""
    user, fused = _c(user, np.int64), _c(fused, np.bool_)
    head = np.empty(user.size, np.int64)
    library().caspar_chain_heads(user.size, user.ctypes.data, fused.ctypes.data,
                                 head.ctypes.data)
    return head


def single_writes(w, a, b):
    """:func:`.sxwalks.single_writes`."""
    w, a, b = _c(w, np.int64), _c(a, np.int64), _c(b, np.int64)
    K = w.size
    arg0, arg1 = np.empty(K, np.int64), np.empty(K, np.int64)        # written there
    ok = library().caspar_single_writes(K, w.ctypes.data, a.ctypes.data, b.ctypes.data,
                                        arg0.ctypes.data, arg1.ctypes.data)
    return bool(ok), arg0, arg1


def first_of_each(key):
    """:func:`.sxwalks.first_of_each`."""
    key = _c(key, np.uint64)
    out = np.empty(key.size, np.int64)
    m = library().caspar_first_of_each(key.size, key.ctypes.data, out.ctypes.data)
    return out[:m]


def claims_hold(op, leaf, attr, bits, a0, a1, vh, M, F):
    """:func:`.sxwalks.claims_hold`."""
    M, F = _c(M, np.int64), _c(F, np.int64)
    arrays = [_c(op, np.int64), _c(leaf, np.int8), _c(attr, np.int64), _c(bits, np.uint64),
              _c(a0, np.int64), _c(a1, np.int64), _c(vh, np.uint64)]
    L, N = M.shape
    return bool(library().caspar_claims_hold(*[x.ctypes.data for x in arrays], L, N,
                                             M.ctypes.data, F.ctypes.data))


def spine_tour(op, a0, a1, tree, sp, tops, add, sub, neg):
    """:func:`.sxwalks.spine_tour`."""
    op, a0, a1 = _c(op, np.int64), _c(a0, np.int64), _c(a1, np.int64)
    tree, sp, tops = _c(tree, np.bool_), _c(sp, np.int64), _c(tops, np.int64)
    K, S = op.size, sp.size
    top_of = np.empty(K, np.int64)
    span = np.empty((K, 3), np.int64)
    o_top, o_node, o_dist, o_host = (np.empty(2 * S, np.int64) for _ in range(4))
    o_par = np.empty(2 * S, np.bool_)
    n = library().caspar_spine_tour(
        K, op.ctypes.data, a0.ctypes.data, a1.ctypes.data, tree.ctypes.data, S,
        sp.ctypes.data, tops.size, tops.ctypes.data, int(add), int(sub), int(neg),
        top_of.ctypes.data, span.ctypes.data, o_top.ctypes.data, o_node.ctypes.data,
        o_par.ctypes.data, o_dist.ctypes.data, o_host.ctypes.data)
    return (o_top[:n], o_node[:n], o_par[:n], top_of, span, o_dist[:n], o_host[:n])


def program_uses(a0, a1, out):
    """:func:`.sxchains.program_uses` from the argument arrays and the outputs."""
    a0, a1, out = _c(a0, np.int64), _c(a1, np.int64), _c(out, np.int64)
    uses = np.empty(a0.size, np.int64)
    library().caspar_program_uses(a0.size, a0.ctypes.data, a1.ctypes.data, out.size,
                                  out.ctypes.data, uses.ctypes.data)
    return uses


def plain(op, a0, a1, leaf, value, vh, hashed, codes, not_leaf, leaf_const, head,
          gathered):
    """:func:`.bulk._plain` (its rules and :func:`.bulk._chain_constants_ok`'s) on
    the DAG's arrays: ``codes`` the op codes ADD, SUB, MUL, DIV, NEG, IF_ELSE_ZERO,
    FMOD, COPYSIGN, OUTPUT; ``head`` the chain heads (:func:`.sxchains.sum_chains`)."""
    arrays = [_c(op, np.int64), _c(a0, np.int64), _c(a1, np.int64), _c(leaf, np.int8),
              _c(value, np.float64), _c(vh, np.uint64), _c(hashed, np.bool_),
              _c(codes, np.int64)]
    head, gathered = _c(head, np.int64), _c(gathered, np.int64)
    return bool(library().caspar_plain(op.size, *[x.ctypes.data for x in arrays],
                                       int(not_leaf), int(leaf_const), head.ctypes.data,
                                       gathered.size, gathered.ctypes.data))


def sum_chains(op, a0, a1, uses, add, sub):
    """:func:`.sxchains.sum_chains`' ``(head, in_sum)`` from the op and argument arrays
    and :func:`.sxchains.program_uses`."""
    op, a0, a1, uses = (_c(x, np.int64) for x in (op, a0, a1, uses))
    head, in_sum = np.empty(op.size, np.int64), np.empty(op.size, np.bool_)
    library().caspar_sum_chains(op.size, op.ctypes.data, a0.ctypes.data, a1.ctypes.data,
                                uses.ctypes.data, int(add), int(sub), head.ctypes.data,
                                in_sum.ctypes.data)
    return head, in_sum


def scaled(op, a0, a1, leaf, leaf_const, value, spine, codes):
    """:func:`.sxterms._scaled`'s ``(is_scaled, S, c, divide)``; ``codes`` the op codes
    MUL, TWICE, DIV."""
    op, a0, a1 = _c(op, np.int64), _c(a0, np.int64), _c(a1, np.int64)
    leaf, value, spine = _c(leaf, np.int8), _c(value, np.float64), _c(spine, np.bool_)
    codes = _c(codes, np.int64)
    K = op.size
    is_scaled, divide = np.empty(K, np.bool_), np.empty(K, np.bool_)
    S, c = np.empty(K, np.int64), np.empty(K)
    library().caspar_scaled(K, op.ctypes.data, a0.ctypes.data, a1.ctypes.data,
                            leaf.ctypes.data, int(leaf_const), value.ctypes.data,
                            spine.ctypes.data, codes.ctypes.data, is_scaled.ctypes.data,
                            S.ctypes.data, c.ctypes.data, divide.ctypes.data)
    return is_scaled, S, c, divide


def dag_nodes(op, idx, nz, kinds, codes, leaves):
    """:func:`.sxdag.build_dag`'s reading of the instructions: ``(leaf, attr, outs,
    has_alias)`` with ``outs`` the output instructions in (output, nonzero) order, or
    None where an op is refused or a call or an input index is not 0 or 1.  ``kinds``:
    the op kind per code (the last entry: codes past the table), ``codes`` the kinds
    REFUSED, CALL, ALIAS and the ops INPUT, CONST, OUTPUT, ``leaves`` the leaf kinds
    VAR, PAR, CONST, NOT_LEAF."""
    op, idx, nz = _c(op, np.int64), _c(idx, np.int64), _c(nz, np.int64)
    kinds, codes, leaves = _c(kinds, np.int64), _c(codes, np.int64), _c(leaves, np.int8)
    K = op.size
    leaf, attr, outs = np.empty(K, np.int8), np.empty(K, np.int64), np.empty(K, np.int64)
    info = np.zeros(4, np.int64)
    library().caspar_dag_nodes(K, op.ctypes.data, idx.ctypes.data, nz.ctypes.data,
                               kinds.size - 1, kinds.ctypes.data, codes.ctypes.data,
                               leaves.ctypes.data, leaf.ctypes.data, attr.ctypes.data,
                               outs.ctypes.data, info.ctypes.data)
    if not info[0]:
        return None
    outs = outs[:info[2]]
    if not info[3]:
        outs = outs[np.lexsort((nz[outs], idx[outs]))]
    return leaf, attr, outs, bool(info[1])


def spine_refs(op, a0, a1, spine, scaled, S_of, roots, add, sub):
    """``(dref, from_spine, is_root, tree, toured, tops)`` of
    :func:`.sxterms.split_instances` (the spine references and the tour's tops)."""
    op, a0, a1 = _c(op, np.int64), _c(a0, np.int64), _c(a1, np.int64)
    spine, scaled = _c(spine, np.bool_), _c(scaled, np.bool_)
    S_of, roots = _c(S_of, np.int64), _c(roots, np.int64)
    K = op.size
    dref, from_spine = np.empty(K, np.int64), np.empty(K, np.int64)
    is_root, tree, toured = (np.empty(K, np.bool_) for _ in range(3))
    tops = np.empty(K, np.int64)
    m = library().caspar_spine_refs(
        K, op.ctypes.data, a0.ctypes.data, a1.ctypes.data, spine.ctypes.data,
        scaled.ctypes.data, S_of.ctypes.data, roots.size, roots.ctypes.data, int(add),
        int(sub), dref.ctypes.data, from_spine.ctypes.data, is_root.ctypes.data,
        tree.ctypes.data, toured.ctypes.data, tops.ctypes.data)
    return dref, from_spine, is_root, tree, toured, tops[:m].copy()


def leaf_hashes(leaf, value, attr, kinds, H):
    """``(h, vh, size)`` of :func:`.sxhash.term_hashes` before its walk: the leaves'
    shape and value hashes and sizes (``kinds`` LEAF_VAR, LEAF_PAR, LEAF_CONST; ``H``
    their shape hashes), zeros elsewhere."""
    leaf, value, attr = _c(leaf, np.int8), _c(value, np.float64), _c(attr, np.int64)
    kinds, H = _c(kinds, np.int64), _c(H, np.uint64)
    K = leaf.size
    h, vh, size = np.empty(K, np.uint64), np.empty(K, np.uint64), np.empty(K, np.int64)
    library().caspar_leaf_hashes(K, leaf.ctypes.data, value.ctypes.data, attr.ctypes.data,
                                 kinds.ctypes.data, H.ctypes.data, h.ctypes.data,
                                 vh.ctypes.data, size.ctypes.data)
    return h, vh, size


def term_hashes(op, a0, a1, leaf, not_leaf, value, attr, kinds, H, bake, roots, max_depth,
                max_leaves):
    """:func:`.sxhash.term_hashes`' ``(h, ok, vh, hashed)``: :func:`leaf_hashes`,
    :func:`hash_trees` and :func:`hash_flags` in one call, or None where the limits do
    not fit its small scratch counters (``max_depth`` < 255, ``max_leaves`` < 2^31 - 1)."""
    if not (0 <= max_depth < 255 and 0 <= max_leaves < 2 ** 31 - 1):
        return None
    op, a0, a1 = _c(op, np.int64), _c(a0, np.int64), _c(a1, np.int64)
    leaf, value, attr = _c(leaf, np.int8), _c(value, np.float64), _c(attr, np.int64)
    kinds, H, bake = _c(kinds, np.int64), _c(H, np.uint64), _c(bake, np.bool_)
    roots = _c(roots, np.int64)
    K = op.size
    h, vh = np.empty(K, np.uint64), np.empty(K, np.uint64)
    hashed, ok = np.empty(K, np.bool_), np.empty(K, np.bool_)
    library().caspar_term_hashes(
        K, op.ctypes.data, a0.ctypes.data, a1.ctypes.data, leaf.ctypes.data, int(not_leaf),
        value.ctypes.data, attr.ctypes.data, kinds.ctypes.data, H.ctypes.data,
        bake.ctypes.data, value.view(np.uint64).ctypes.data, roots.ctypes.data, roots.size,
        int(max_depth), int(max_leaves), h.ctypes.data, vh.ctypes.data, hashed.ctypes.data,
        ok.ctypes.data)
    return h, ok, vh, hashed


def hash_flags(leaf, not_leaf, inner, height, size, max_depth, max_leaves):
    """``(hashed, ok)`` of :func:`.sxhash.term_hashes` after its walk."""
    leaf, inner = _c(leaf, np.int8), _c(inner, np.bool_)
    height, size = _c(height, np.int64), _c(size, np.int64)
    K = leaf.size
    hashed, ok = np.empty(K, np.bool_), np.empty(K, np.bool_)
    library().caspar_hash_flags(K, leaf.ctypes.data, int(not_leaf), inner.ctypes.data,
                                height.ctypes.data, size.ctypes.data, int(max_depth),
                                int(max_leaves), hashed.ctypes.data, ok.ctypes.data)
    return hashed, ok


def spine_reach(spine, scaled, S_of, top_of, roots, top_id, t_node, is_root, tree,
                from_spine, dref, max_rounds):
    """:func:`.sxterms._walked`: the walked nodes, or None where the split gives way
    (no fixed point within ``max_rounds`` rounds, a partial sum shared by spines, a
    scaled spine used twice)."""
    spine, scaled, is_root, tree = (_c(x, np.bool_) for x in (spine, scaled, is_root, tree))
    S_of, top_of, roots, top_id, t_node, from_spine, dref = (
        _c(x, np.int64) for x in (S_of, top_of, roots, top_id, t_node, from_spine, dref))
    K = spine.size
    walked = np.empty(K, np.bool_)
    status = library().caspar_spine_reach(
        K, spine.ctypes.data, scaled.ctypes.data, S_of.ctypes.data, top_of.ctypes.data,
        roots.size, roots.ctypes.data, top_id.size, top_id.ctypes.data, t_node.ctypes.data,
        is_root.ctypes.data, tree.ctypes.data, from_spine.ctypes.data, dref.ctypes.data,
        int(max_rounds), walked.ctypes.data)
    return walked if status == 0 else None
