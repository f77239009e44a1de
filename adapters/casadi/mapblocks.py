"""``Function.map`` call sites as :class:`~caspar_backend.blocks.TemplateBlock` s.

Replaying a mapped Function once per instance builds N copies of its body in
the model graph, and the pattern grouping then has to rediscover that they
share one shape.  When the map call's arguments are, elementwise, plain leaves
of the NLP (entries of ``x``, of ``p``, or constants) and its outputs reach
``g`` or ``f`` only linearly, the instances can be handed to caspar as tables
instead: the mapped Function's body is built ONCE as a template over local
slots, and instance ``k`` of output element ``e`` adds ``coef * T_e(...)`` into
the row it reaches.

Where the outputs go is read off the *outer* program of an
:class:`~.compiler.MXCallProgram` (the NLP's MX graph with every map result
replaced by an input symbol ``y``).  A result ``y`` becomes a block instance
when its only use is an affine step (``+``, ``-``, n-ary sum, negation,
``2*``, multiplication or division by a constant) whose result again has one
affine use, and so on, ending in one output nonzero of ``f`` or ``g``:

    out = flat(y := 0) + coef * y,      coef = product of the constant factors

so the outer program runs once with ``y := 0`` for the flat part of the row,
and ``coef * T_e`` is the block contribution (``coef`` baked into the template
when one value serves every instance, else a data slot).  Instances with an
argument computed by an expression (another map's result, ``2*x``, ...) or a
result used in any other way (nonlinearly, in two rows, as another call's
argument) are replayed as before.

Leaf kinds of an instance's arguments form its *signature* (which input
elements are variables, parameters, constants); instances are grouped by
signature and each signature gets its own template.  A constant argument that
is the same in every instance of a signature is baked into the template,
otherwise it is a data slot.
"""

from __future__ import annotations

import numpy as np

from caspar_backend.blocks import TemplateBlock
from caspar_backend.expr import Graph, topo_order
from caspar_backend.rebuild import rebuild

from . import optable as T
from .program import SUM, UNARY, offsets

_ADD, _SUB, _MUL, _DIV = (T.CODES[k] for k in ("OP_ADD", "OP_SUB", "OP_MUL", "OP_DIV"))
_NEG, _TWICE = T.CODES["OP_NEG"], T.CODES["OP_TWICE"]

# nxt codes of affine_links
UNUSED = -1
BAD = -2          # used nonlinearly or more than once
OUT0 = -3         # -3 - pos: output position pos
_MAX_DEPTH = 10_000

# leaf kinds of call arguments
K_VAR, K_PAR, K_CONST, K_OTHER = 0, 1, 2, 3


def affine_links(outer) -> tuple[np.ndarray, np.ndarray]:
    """``(nxt, coef)`` over the SSA values of SX program ``outer``.

    ``nxt[v]``: the SSA value of the only step that reads ``v`` when that step is
    affine in ``v`` (``coef[v]`` its factor), ``OUT0 - pos`` when the only use
    is output nonzero ``pos``, ``UNUSED``, or ``BAD``.
    """
    n = outer.n_ssa
    nxt = [UNUSED] * n
    coef = [1.0] * n
    c_lo = outer.first_step_ssa - len(outer.consts)
    c_hi = outer.first_step_ssa
    consts = outer.consts

    def link(v, t, c):
        if nxt[v] == UNUSED:
            nxt[v] = t
            coef[v] = c
        else:
            nxt[v] = BAD

    for op, a, b, t in outer.steps:
        if b >= 0:
            if op == _ADD:
                link(a, t, 1.0)
                link(b, t, 1.0)
            elif op == _SUB:
                link(a, t, 1.0)
                link(b, t, -1.0)
            elif op == _MUL and c_lo <= a < c_hi:
                link(b, t, consts[a - c_lo])
            elif op == _MUL and c_lo <= b < c_hi:
                link(a, t, consts[b - c_lo])
            elif op == _DIV and c_lo <= b < c_hi and consts[b - c_lo] != 0.0:
                link(a, t, 1.0 / consts[b - c_lo])
                nxt[b] = BAD
            else:
                nxt[a] = BAD
                nxt[b] = BAD
        elif b == UNARY:
            if op == _NEG:
                link(a, t, -1.0)
            elif op == _TWICE:
                link(a, t, 2.0)
            else:
                nxt[a] = BAD
        elif b == SUM:
            for i in a:
                if i >= 0:
                    link(i, t, 1.0)
                else:
                    link(~i, t, -1.0)
        else:  # CALL
            for d in outer.calls[op][1]:
                nxt[d] = BAD
    for pos, v in enumerate(outer.out_ssa):
        link(v, OUT0 - pos, 1.0)
    return np.asarray(nxt, dtype=np.int64), np.asarray(coef, dtype=np.float64)


def sinks(nxt, coef, start) -> tuple[np.ndarray, np.ndarray]:
    """``(pos, c)`` per SSA value in ``start``: the output position its affine
    chain ends in and the chain's factor; pos ``UNUSED``/``BAD`` otherwise."""
    cur = np.asarray(start, dtype=np.int64).copy()
    acc = np.ones(cur.shape)
    state = nxt[cur]
    for _ in range(_MAX_DEPTH):
        m = state >= 0
        if not m.any():
            break
        acc[m] *= coef[cur[m]]
        cur[m] = state[m]
        state[m] = nxt[cur[m]]
    else:
        state[state >= 0] = BAD
    out = state <= OUT0
    acc[out] *= coef[cur[out]]
    pos = np.where(out, OUT0 - state, state)
    return pos, acc


class MapSite:
    """Block analysis of one map call site of an outer program (final).

    ``arg_ssa`` (n_in, N) and ``y_ssa`` (n_out, N): SSA values of instance k's
    input / output element (inner Function's flat nonzero order).
    """

    def __init__(self, mp, ssa, y0):
        N = self.N = mp.N
        self.prog = mp
        S = np.asarray(ssa, dtype=np.int64)
        in_off = offsets(mp.n_in)
        self.arg_ssa = np.vstack(
            [S[in_off[i]:in_off[i + 1]].reshape(N, c).T for i, c in enumerate(mp.inner_in)]
        ) if in_off[-1] else np.zeros((0, N), np.int64)
        out_off = offsets(mp.n_out)
        self.y_ssa = np.vstack(
            [(y0 + out_off[o] + np.arange(N * c)).reshape(N, c).T
             for o, c in enumerate(mp.inner_out)]
        ) if out_off[-1] else np.zeros((0, N), np.int64)


def analyse(site: MapSite, outer, n_x, n_p, links, first_out):
    """Decide per instance of ``site``: block (True) or replay (False).

    Returns ``(blocked, kinds, pos, coef)``: ``kinds`` (n_in, N) leaf kinds of
    the arguments, ``pos``/``coef`` (n_out, N) the output position (relative to
    ``first_out``, the first original output) each result reaches and its factor
    (``pos < 0``: unused).
    """
    A = site.arg_ssa
    n_orig = n_x + n_p
    c_lo = outer.first_step_ssa - len(outer.consts)
    kinds = np.full(A.shape, K_OTHER, dtype=np.int8)
    kinds[A < n_x] = K_VAR
    kinds[(A >= n_x) & (A < n_orig)] = K_PAR
    kinds[(A >= c_lo) & (A < outer.first_step_ssa)] = K_CONST
    leaves = np.all(kinds != K_OTHER, axis=0)
    nxt, coef = links
    pos, c = sinks(nxt, coef, site.y_ssa.ravel())
    pos, c = pos.reshape(site.y_ssa.shape), c.reshape(site.y_ssa.shape)
    reach = pos >= first_out                # ends in f or g (not in a call argument)
    ok = reach | (pos == UNUSED)
    blocked = leaves & np.all(ok, axis=0) & np.any(reach, axis=0)
    rel = np.where(reach, pos - first_out, -1)
    return blocked, kinds, rel, c


def make_blocks(site: MapSite, outer, n_x, blocked, kinds, rel, coef) -> list:
    """TemplateBlocks for the blocked instances; each block's ``rows`` are output
    positions relative to the first original output (objective first)."""
    mp = site.prog
    A = site.arg_ssa
    c_lo = outer.first_step_ssa - len(outer.consts)
    consts = np.asarray(outer.consts, dtype=np.float64)
    idx = np.flatnonzero(blocked)
    if not idx.size:
        return []
    sig, inv = np.unique(kinds[:, idx].T, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    blocks = []
    for s in range(len(sig)):
        inst = idx[inv == s]
        kd = sig[s]
        tg = Graph()
        leaves = []
        var_rows, par_rows, data_rows = [], [], []
        for e, k in enumerate(kd):
            if k == K_VAR:
                leaves.append(tg.var(len(var_rows)))
                var_rows.append(e)
            elif k == K_PAR:
                leaves.append(tg.param(len(par_rows)))
                par_rows.append(e)
            else:
                vals = consts[A[e, inst] - c_lo]
                if np.all(vals == vals[0]):
                    leaves.append(tg.const(float(vals[0])))
                else:
                    leaves.append(tg.data(len(data_rows)))
                    data_rows.append(e)
        outs = mp.inner.run(tg, leaves)
        vt = A[var_rows][:, inst]
        pt = A[par_rows][:, inst] - n_x
        dt = consts[A[data_rows][:, inst] - c_lo] if data_rows else np.zeros((0, len(inst)))
        for e, root in enumerate(outs):
            use = rel[e, inst] >= 0
            if not use.any() or (root.op == "const" and root.attr == 0.0):
                continue
            sel = inst[use]
            cf = coef[e, sel]
            blocks.append(_element_block(
                tg, root, vt[:, use], pt[:, use], dt[:, use], cf, rel[e, sel],
                f"{mp.name}[{e}]"))
    return blocks


def _element_block(tg, root, vt, pt, dt, cf, rows, name) -> TemplateBlock:
    """One block for one output element: slots compacted to those ``root`` uses,
    the factor baked in (uniform) or a trailing data slot."""
    used = {"var": set(), "param": set(), "data": set()}
    for nd in topo_order([root]):
        if nd.op in used:
            used[nd.op].add(nd.attr)
    keep = {k: sorted(v) for k, v in used.items()}
    remap = {k: {old: new for new, old in enumerate(v)} for k, v in keep.items()}
    g = Graph()
    make = {"var": g.var, "param": g.param, "data": g.data}
    r = rebuild([root], g, lambda nd: make[nd.op](remap[nd.op][nd.attr]) if nd.op in make
                else g.const(nd.attr))[0]
    dt = dt[keep["data"]]
    if np.all(cf == cf[0]):
        r = g.mul(g.const(float(cf[0])), r)
    else:
        r = g.mul(g.data(len(keep["data"])), r)
        dt = np.vstack([dt, cf[None, :]])
    return TemplateBlock(g, r, vt[keep["var"]], pt[keep["param"]], dt, rows=rows, name=name)
