"""An SX instruction program (:class:`~.sxdecode.Algorithm`) as a DAG in arrays.

casadi's virtual machine reuses work slots: instruction k writes ``w[o]`` and
reads ``w[a]``, ``w[b]``, each read meaning *the last write to that slot before
k*.  :func:`build_dag` resolves every read to the instruction that wrote it, so
the program becomes a DAG whose node ids are instruction indices
(single-assignment form), without a Python step per instruction:

* built with ``live_variables=False`` (what the bulk reader asks casadi for),
  every slot is written once and a read's writer is a table lookup;
* otherwise the events ``(slot, k, kind)`` -- reads of a and b, then the write,
  in instruction order -- are sorted by slot, stably (two 16-bit radix passes),
  and a read's writer is the last write event before it (a running maximum).

:class:`SXDag` (arrays over the K instructions; only value nodes are meaningful):

=========  ================================================================
``op``     int64 casadi op code (OP_INPUT for leaves x/p, OP_CONST, ...)
``arg0``   int64 node id of the first argument (-1: none)
``arg1``   int64 node id of the second argument (-1: none)
``leaf``   int8 kind: LEAF_VAR, LEAF_PAR, LEAF_CONST, or NOT_LEAF
``attr``   int64: variable index (LEAF_VAR), parameter index (LEAF_PAR), else -1
``value``  float64 constant of LEAF_CONST nodes (0 elsewhere)
``out``    int64 (n_out_nz,): the node of each output nonzero, outputs in order
=========  ================================================================

Inputs: input 0 holds the variables ``x``, input 1 the parameters ``p`` (the
layout of the NLP Function ``(x, p) -> (f, g)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import optable as T

LEAF_VAR, LEAF_PAR, LEAF_CONST, NOT_LEAF = 0, 1, 2, -1

_INPUT, _OUTPUT, _CONST = (T.CODES[k] for k in ("OP_INPUT", "OP_OUTPUT", "OP_CONST"))
_ALIASES = np.array([T.CODES[k] for k in T.ALIAS], np.int64)
#: the op kind of each code (the last entry: every code past the table)
_KINDS = np.asarray(T.KIND + [T.K_REFUSED], np.int64)
_NODE_CODES = np.array([T.K_REFUSED, T.K_CALL, T.K_ALIAS, _INPUT, _CONST, _OUTPUT], np.int64)
_LEAVES = np.array([LEAF_VAR, LEAF_PAR, LEAF_CONST, NOT_LEAF], np.int8)


@dataclass(eq=False)
class SXDag:
    """An SX program as a DAG over instruction indices (final; module docstring)."""

    op: np.ndarray
    arg0: np.ndarray
    arg1: np.ndarray
    leaf: np.ndarray
    attr: np.ndarray
    value: np.ndarray
    out: np.ndarray
    #: the walks of this DAG by the compiled loops (:func:`walks`)
    compiled: bool = False

    @cached_property
    def value_bits(self) -> np.ndarray:
        """uint64 (K,): the bits of ``value + 0.0`` (-0.0 as 0.0), for exact equality
        of constants."""
        return (self.value + 0.0).view(np.uint64)


#: the DAG walks by the C++ loops (:mod:`.sxwalks_native`) wherever they can be had;
#: False: as ``compiled`` says (the tests compare the three implementations)
NATIVE = True


def native(which: str = "walks"):
    """:mod:`.sxwalks_native` (``which="walks"``) or :mod:`.sxkernels_native`
    (``"kernels"``) where :data:`NATIVE` and its library can be had, else None (the
    callers then take their NumPy passes: the same results)."""
    if NATIVE:
        if which == "walks":
            from . import sxwalks_native as module
        else:
            from . import sxkernels_native as module
        if module.library() is not None:
            return module
    return None


def walks(compiled: bool):
    """The module of the DAG walks, the same functions and results in each:
    :mod:`.sxwalks_native` (C++, no start-up cost: any size) where it can be built,
    else :mod:`.sxwalks` (Numba loops, for large programs, ``compiled``) or
    :mod:`.sxwalks_numpy` (NumPy passes)."""
    if NATIVE:
        from . import sxwalks_native

        if sxwalks_native.library() is not None:
            return sxwalks_native
    if compiled:
        from . import sxwalks as module
    else:
        from . import sxwalks_numpy as module
    return module


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """A stable argsort of non-negative int64 ``keys`` < 2^32 (LSD radix on 16-bit
    halves: NumPy radix-sorts 16-bit keys in linear time)."""
    lo = (keys & 0xFFFF).astype(np.uint16)
    order = np.argsort(lo, kind="stable")
    if keys.size and int(keys.max()) > 0xFFFF:
        hi = (keys[order] >> 16).astype(np.uint16)
        order = order[np.argsort(hi, kind="stable")]
    return order


def _single_writes(alg, compiled: bool):
    """``(arg0, arg1)`` when every slot is written once (casadi's
    ``live_variables=False``): a read's writer is the slot's only writer, written
    before it (:func:`.sxwalks.single_writes`); else None."""
    ok, arg0, arg1 = walks(compiled).single_writes(alg.w, alg.a, alg.b)
    return (arg0, arg1) if ok else None


def _sorted_reads(alg):
    """``(arg0, arg1)`` for reused slots: events sorted by slot (module docstring);
    None when a slot is read before any write."""
    K = alg.size
    # events in program order: read a, read b, write (a read at k precedes k's write)
    slots = np.stack([alg.a, alg.b, alg.w], axis=1).reshape(-1)
    kind = np.tile(np.array([0, 1, 2], np.int8), K)
    kk = np.repeat(np.arange(K, dtype=np.int64), 3)
    keep = slots >= 0
    slots, kind, kk = slots[keep], kind[keep], kk[keep]
    if slots.size and int(slots.max()) >= 1 << 32:
        return None
    order = _stable_order(slots)
    s_slot, s_kind, s_k = slots[order], kind[order], kk[order]
    is_w = s_kind == 2
    pos = np.where(is_w, np.arange(s_kind.size), -1)
    last = np.maximum.accumulate(pos) if pos.size else pos
    rd = ~is_w
    src = last[rd]
    if np.any(src < 0) or np.any(s_slot[np.maximum(src, 0)] != s_slot[rd]):
        return None   # a read before any write of its slot
    writer = s_k[src]
    arg0 = np.full(K, -1, np.int64)
    arg1 = np.full(K, -1, np.int64)
    rk, rkind = s_k[rd], s_kind[rd]
    a_is = rkind == 0
    arg0[rk[a_is]] = writer[a_is]
    arg1[rk[~a_is]] = writer[~a_is]
    return arg0, arg1


def build_dag(alg, compiled: bool = False) -> SXDag | None:
    """The DAG of decoded program ``alg`` (walked by the compiled loops when
    ``compiled``); None when it holds something the bulk path does not read (an op
    outside the caspar table, a read of an unwritten slot, more than two inputs)."""
    K = alg.size
    op = alg.op
    nodes = _nodes(alg)
    if nodes is None:
        return None
    leaf, attr, outs, has_alias = nodes
    got = _single_writes(alg, compiled) if alg.size else None
    if got is None:
        got = _sorted_reads(alg)
    if got is None:
        return None
    arg0, arg1 = got
    if has_alias:
        # aliases (OP_ASSIGN, ...): a use of the alias is a use of its first argument
        alias = (_KINDS[np.clip(op, 0, len(T.KIND))] == T.K_ALIAS) & (op >= 0)
        target = np.arange(K, dtype=np.int64)
        target[alias] = arg0[alias]
        for _ in range(64):
            nxt = target[target]
            if np.array_equal(nxt, target):
                break
            target = nxt
        else:
            return None
        arg0 = np.where(arg0 >= 0, target[np.maximum(arg0, 0)], -1)
        arg1 = np.where(arg1 >= 0, target[np.maximum(arg1, 0)], -1)
    return SXDag(op, arg0, arg1, leaf, attr, alg.value, arg0[outs], compiled)


def _nodes(alg):
    """``(leaf, attr, outs, has_alias)`` of the instructions (:class:`SXDag`'s leaf
    and attr; ``outs`` the output instructions in (output, nonzero) order; whether an
    alias op -- a code of :data:`_ALIASES` -- is met), or None where an op is refused
    or a call or an input index is not 0 (x) or 1 (p).  One C++ pass where it can be
    had (:func:`.sxwalks_native.dag_nodes`), else NumPy passes."""
    nat = native()
    if nat is not None:
        return nat.dag_nodes(alg.op, alg.idx, alg.nz, _KINDS, _NODE_CODES, _LEAVES)
    op = alg.op
    kd = _KINDS[np.clip(op, 0, len(T.KIND))]   # codes < 0 read as code 0
    if np.any(kd == T.K_REFUSED) or np.any(kd == T.K_CALL):
        return None
    if np.any((op == _INPUT) & ((alg.idx < 0) | (alg.idx > 1))):
        return None
    K = op.size
    leaf = np.full(K, NOT_LEAF, np.int8)
    attr = np.full(K, -1, np.int64)
    inp = op == _INPUT
    leaf[inp] = np.where(alg.idx[inp] == 0, LEAF_VAR, LEAF_PAR)
    attr[inp] = alg.nz[inp]
    leaf[op == _CONST] = LEAF_CONST
    outs = np.flatnonzero(op == _OUTPUT)
    # output nonzeros in (output, nonzero) order
    outs = outs[np.lexsort((alg.nz[outs], alg.idx[outs]))]
    return leaf, attr, outs, bool(np.any((kd == T.K_ALIAS) & (op >= 0)))
