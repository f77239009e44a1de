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
replaced by an input symbol ``y``).  Each use of a result ``y`` is followed
through single-use affine steps (``+``, ``-``, n-ary sum, negation, ``2*``,
multiplication or division by a constant) to where it lands:

* an output nonzero of ``f`` or ``g``: ``out = flat(y := 0) + coef * y``,
  ``coef`` the product of the constant factors -- block contribution
  ``coef * T_e`` into that row;
* a square: the chain reaches ``u = coef_u * y + off_u`` (``off_u`` from
  constants added on the way) whose only use is ``u * u`` (or ``sq(u)``), and the
  square's value ``w`` lands, again through affine steps, in an output with factor
  ``coef_w`` -- block contribution ``coef_w (off_u + coef_u T_e)^2``.  This is
  the least-squares objective of estimation problems (``0.5 * dot(e, e)`` with
  ``e = data - y``), whose results also enter continuity constraints: a result
  may have several uses, each a contribution.

The outer program then runs once with ``y := 0`` and every such square
``w := 0`` for the flat part of the rows; ``coef`` is baked into a template
when one value serves every instance, else a data slot.  Instances with an
argument computed by an expression other than a constant times a leaf
(another map's result, ``sin(x)``, ...) or a result used in any other way (in
another call's argument, nonlinearly other than squared) are replayed as
before.

Leaf kinds of an instance's arguments form its *signature* (which input
elements are variables, parameters, constants, or a constant times a variable or
parameter -- ``repmat(params * scale, 1, N)``); instances are grouped by
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
_NEG, _TWICE, _SQ = (T.CODES[k] for k in ("OP_NEG", "OP_TWICE", "OP_SQ"))
_MAX_DEPTH = 10_000

# use kinds (use_lists): an affine step, a square, an output nonzero, anything else
U_AFF, U_SQ, U_OUT, U_BAD = 0, 1, 2, 3
# the ``other`` operand of an affine use: none, or other terms of an n-ary sum
NO_OTHER, SUM_OTHER = -1, -2

# leaf kinds of call arguments
K_VAR, K_PAR, K_CONST, K_OTHER, K_SVAR, K_SPAR = 0, 1, 2, 3, 4, 5


def use_lists(outer, seeds) -> dict:
    """The uses of the SSA values of SX program ``outer`` reachable from ``seeds``
    through affine steps and squares: per such value a list of ``(kind, target, c, s,
    other)``.  ``U_AFF``: step ``target = c * value + s * other`` (``other`` an SSA value,
    ``NO_OTHER`` or ``SUM_OTHER``); ``U_SQ``: the square ``target = value^2`` (``c`` its
    op code); ``U_OUT``: output nonzero ``target``; ``U_BAD``: any other use.  One pass
    over the steps (in order, so a value's uses follow its definition); values outside
    the watched set cost one lookup per operand."""
    watch = bytearray(outer.n_ssa)
    for v in seeds:
        watch[v] = 1
    uses: dict = {}
    c_lo = outer.first_step_ssa - len(outer.consts)
    c_hi = outer.first_step_ssa
    consts = outer.consts
    bad = (U_BAD, -1, 0.0, 0.0, NO_OTHER)

    def add(v, use):
        uses.setdefault(v, []).append(use)
        if use[0] == U_AFF or use[0] == U_SQ:
            watch[use[1]] = 1

    for op, a, b, t in outer.steps:
        if b >= 0:
            wa, wb = watch[a], watch[b]
            if not (wa or wb):
                continue
            if op == _ADD:
                if wa:
                    add(a, (U_AFF, t, 1.0, 1.0, b))
                if wb:
                    add(b, (U_AFF, t, 1.0, 1.0, a))
            elif op == _SUB:
                if wa:
                    add(a, (U_AFF, t, 1.0, -1.0, b))
                if wb:
                    add(b, (U_AFF, t, -1.0, 1.0, a))
            elif op == _MUL and a == b:
                add(a, (U_SQ, t, float(op), 0.0, NO_OTHER))
            elif op == _MUL and c_lo <= a < c_hi:
                add(b, (U_AFF, t, consts[a - c_lo], 0.0, NO_OTHER))
            elif op == _MUL and c_lo <= b < c_hi:
                add(a, (U_AFF, t, consts[b - c_lo], 0.0, NO_OTHER))
            elif op == _DIV and c_lo <= b < c_hi and consts[b - c_lo] != 0.0:
                if wa:
                    add(a, (U_AFF, t, 1.0 / consts[b - c_lo], 0.0, NO_OTHER))
            else:
                if wa:
                    add(a, bad)
                if wb:
                    add(b, bad)
        elif b == UNARY:
            if not watch[a]:
                continue
            if op == _NEG:
                add(a, (U_AFF, t, -1.0, 0.0, NO_OTHER))
            elif op == _TWICE:
                add(a, (U_AFF, t, 2.0, 0.0, NO_OTHER))
            elif op == _SQ:
                add(a, (U_SQ, t, float(op), 0.0, NO_OTHER))
            else:
                add(a, bad)
        elif b == SUM:
            for i in a:
                if i >= 0:
                    if watch[i]:
                        add(i, (U_AFF, t, 1.0, 0.0, SUM_OTHER))
                elif watch[~i]:
                    add(~i, (U_AFF, t, -1.0, 0.0, SUM_OTHER))
        else:  # CALL
            for d in outer.calls[op][1]:
                if watch[d]:
                    add(d, bad)
    for pos, v in enumerate(outer.out_ssa):
        if watch[v]:
            add(v, (U_OUT, pos, 1.0, 0.0, NO_OTHER))
    return uses


def land(uses, use, const_value):
    """Where ``use`` of a value lands: ``("out", pos, coef)``,
    ``("sq", pos, coef_w, coef_u, off_u, w, op)`` (see the module docstring; ``w`` the
    square's SSA value, ``op`` its op code), ``("unused",)`` (nothing reads the chain's
    end) or None.  ``const_value(v)``: the value of
    SSA ``v`` when it is a constant, else None."""
    coef, off = 1.0, 0.0       # the value reached is coef * y + off
    exact = True               # off known (no non-constant added on the way)
    for _ in range(_MAX_DEPTH):
        kind, t, c, s, other = use
        if kind == U_OUT:
            return ("out", t, coef)
        if kind == U_BAD:
            return None
        if kind == U_SQ:
            if not exact:
                return None
            wu = uses.get(t, ())
            w = land(uses, wu[0], const_value) if len(wu) == 1 else None
            if w is None or w[0] != "out":
                return None
            return ("sq", w[1], w[2], coef, off, t, int(c))
        coef *= c
        off *= c
        if s != 0.0:
            ov = const_value(other) if other >= 0 else None
            if ov is None:
                exact = False
            else:
                off += s * ov
        nxt = uses.get(t, ())
        if not nxt:
            return ("unused",)          # an affine function of y that nothing reads
        if len(nxt) != 1:
            return None
        use = nxt[0]
    return None


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


class Analysis:
    """What :func:`analyse` decides for one site (final): ``blocked`` bool (N,);
    ``kinds`` int8 (n_in, N) argument kinds; ``leaf`` int64 (n_in, N) the leaf SSA of
    each argument (for K_SVAR/K_SPAR the scaled leaf) and ``factor`` (n_in, N) its
    constant factor (1 otherwise); ``lands[e][k]``: the landings (:func:`land`) of
    result element e of instance k; ``squares``: SSA values of the squares the flat
    run sets to 0."""

    def __init__(self, blocked, kinds, leaf, factor, lands, squares):
        self.blocked, self.kinds, self.leaf, self.factor = blocked, kinds, leaf, factor
        self.lands, self.squares = lands, squares


def _scaled_leaves(outer, A, n_orig):
    """``(is_scaled, leaf, factor)`` over the argument SSA values ``A``: those written by
    a step ``const * leaf`` or ``leaf * const`` (a leaf: an input below ``n_orig``)."""
    c_lo = outer.first_step_ssa - len(outer.consts)
    c_hi = outer.first_step_ssa
    want = set(int(v) for v in np.unique(A) if v >= c_hi)
    found = {}
    if want:
        for op, a, b, t in outer.steps:
            if t in want and b >= 0 and op == _MUL:
                if c_lo <= a < c_hi and 0 <= b < n_orig:
                    found[t] = (b, outer.consts[a - c_lo])
                elif c_lo <= b < c_hi and 0 <= a < n_orig:
                    found[t] = (a, outer.consts[b - c_lo])
    is_scaled = np.zeros(A.shape, dtype=bool)
    leaf = A.copy()
    factor = np.ones(A.shape)
    for t, (lf, c) in found.items():
        m = A == t
        is_scaled |= m
        leaf[m] = lf
        factor[m] = c
    return is_scaled, leaf, factor


def analyse(site: MapSite, outer, n_x, n_p, uses: dict, first_out) -> Analysis:
    """Decide per instance of ``site``: block or replay (see :class:`Analysis`)."""
    A = site.arg_ssa
    n_orig = n_x + n_p
    c_lo = outer.first_step_ssa - len(outer.consts)
    consts = outer.consts
    kinds = np.full(A.shape, K_OTHER, dtype=np.int8)
    kinds[A < n_x] = K_VAR
    kinds[(A >= n_x) & (A < n_orig)] = K_PAR
    kinds[(A >= c_lo) & (A < outer.first_step_ssa)] = K_CONST
    scaled, leaf, factor = _scaled_leaves(outer, A, n_orig)
    kinds[scaled & (leaf < n_x)] = K_SVAR
    kinds[scaled & (leaf >= n_x)] = K_SPAR
    ok = np.all(kinds != K_OTHER, axis=0)

    def const_value(v):
        return consts[v - c_lo] if c_lo <= v < outer.first_step_ssa else None

    lands = []
    used = np.zeros(site.N, dtype=bool)
    for e in range(site.y_ssa.shape[0]):
        row = []
        for k, y in enumerate(site.y_ssa[e].tolist()):
            got = []
            if ok[k]:
                for u in uses.get(y, ()):
                    r = land(uses, u, const_value)
                    if r is not None and r[0] == "unused":
                        continue
                    if r is None or r[1] < first_out:    # (below: another call's argument)
                        ok[k] = False
                        break
                    got.append(r)
            used[k] |= bool(got)
            row.append(got)
        lands.append(row)
    blocked = ok & used
    squares = [r[5] for row in lands for k, got in enumerate(row) if blocked[k]
               for r in got if r[0] == "sq"]
    return Analysis(blocked, kinds, leaf, factor, lands, squares)


def make_blocks(site: MapSite, outer, n_x, an: Analysis, first_out) -> list:
    """TemplateBlocks for the blocked instances; each block's ``rows`` are output
    positions relative to the first original output (objective first)."""
    mp = site.prog
    c_lo = outer.first_step_ssa - len(outer.consts)
    consts = np.asarray(outer.consts, dtype=np.float64)
    idx = np.flatnonzero(an.blocked)
    if not idx.size:
        return []
    kinds, leaf, factor = an.kinds, an.leaf, an.factor
    sig, inv = np.unique(kinds[:, idx].T, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    blocks = []
    for s in range(len(sig)):
        inst = idx[inv == s]
        tg = Graph()
        leaves = []
        var_rows, par_rows, data_rows = [], [], []
        for e, kd in enumerate(sig[s]):
            if kd in (K_VAR, K_SVAR):
                lf = tg.var(len(var_rows))
                var_rows.append(e)
            elif kd in (K_PAR, K_SPAR):
                lf = tg.param(len(par_rows))
                par_rows.append(e)
            else:
                lf = None
            if kd in (K_SVAR, K_SPAR):
                f = factor[e, inst]
                if np.all(f == f[0]):
                    lf = tg.mul(tg.const(float(f[0])), lf)
                else:
                    lf = tg.mul(tg.data(len(data_rows)), lf)
                    data_rows.append(("factor", e))
            elif kd == K_CONST:
                vals = consts[leaf[e, inst] - c_lo]
                if np.all(vals == vals[0]):
                    lf = tg.const(float(vals[0]))
                else:
                    lf = tg.data(len(data_rows))
                    data_rows.append(("const", e))
            leaves.append(lf)
        outs = mp.inner.run(tg, leaves)
        vt = leaf[var_rows][:, inst]
        pt = leaf[par_rows][:, inst] - n_x
        dt = np.array([factor[e, inst] if what == "factor" else consts[leaf[e, inst] - c_lo]
                       for what, e in data_rows]).reshape(len(data_rows), len(inst))
        nd = len(data_rows)
        for e, root in enumerate(outs):
            if root.op == "const" and root.attr == 0.0:
                continue
            lands = [an.lands[e][k] for k in inst.tolist()]
            col = [j for j, got in enumerate(lands) for r in got if r[0] == "out"]
            if col:
                r = [r for got in lands for r in got if r[0] == "out"]
                blocks.append(_element_block(
                    tg, root, vt[:, col], pt[:, col], dt[:, col],
                    np.array([x[2] for x in r]), np.array([x[1] - first_out for x in r]),
                    f"{mp.name}[{e}]"))
            col = [j for j, got in enumerate(lands) for r in got if r[0] == "sq"]
            if col:
                r = [r for got in lands for r in got if r[0] == "sq"]
                cu = np.array([x[3] for x in r])
                off = np.array([x[4] for x in r])
                u = tg.mul(tg.const(float(cu[0])) if np.all(cu == cu[0]) else tg.data(nd + 1),
                           root)
                u = tg.add(tg.const(float(off[0])) if np.all(off == off[0]) else tg.data(nd),
                           u)
                b1, b2 = T.bind(tg)
                op = r[0][6]
                sq = b2[op](u, u) if op == _MUL else b1[op](u)
                blocks.append(_element_block(
                    tg, sq, vt[:, col], pt[:, col], np.vstack([dt[:, col], off, cu]),
                    np.array([x[2] for x in r]), np.array([x[1] - first_out for x in r]),
                    f"{mp.name}[{e}]^2"))
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
