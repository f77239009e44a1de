"""The bulk reader of an SX ``nlpsol`` problem: instruction arrays to template blocks.

    fn   = Function('caspar_nlp', [x, p], [f, g])      casadi builds the program
    alg  = sxdecode.decode(fn)                           the instructions as arrays
    dag  = sxdag.build_dag(alg)                          slots resolved: a DAG
    T    = sxterms.split_terms(dag, outputs)             root_r = sum coef_t * T_t
    h    = sxhash.term_hashes(dag, T)                    shape hash per term
    blk  = sxgroup.group_terms(dag, T, h)                one TemplateBlock per shape

No step of this runs once per instruction or per term in Python: each is a
handful of NumPy passes over the arrays, plus Python work per *template*
(building it from one representative).  Every root -- the objective and each
constraint nonzero -- becomes the sum of its terms' block instances; the
templates are derived once each, as for any block.

Roots with a term the bulk path does not take (deeper than
:data:`~.sxhash.MAX_DEPTH` or larger than :data:`~.sxhash.MAX_LEAVES`: shared
prefixes) are read by the per-node reader (:class:`~.program.SXProgram`) from a
Function of just those roots.  Programs the decoder does not read (calls of
other Functions, ops caspar refuses, non-finite constants) return None and the
whole problem goes the per-node way, which also raises the precise errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .sxdag import LEAF_CONST, build_dag
from .sxdecode import decode
from .sxgroup import group_terms
from .sxhash import term_hashes
from .sxterms import split_terms


@dataclass(eq=False)
class BulkRead:
    """What the bulk reader produced (final): ``blocks`` whose rows are output
    positions (the ``nf`` objective nonzeros first, then g), ``rest`` bool
    (nf + m,): the roots left to the per-node reader, and ``f_const`` the sum of
    the objective's constant terms (kept out of the blocks: one number, not a
    template)."""

    blocks: list
    rest: np.ndarray
    f_const: float
    stats: dict = field(default_factory=dict)


def read_bulk(fn, f, g) -> BulkRead | None:
    """Template blocks of the SX problem whose Function ``fn = (x, p) -> (f, g)``, or
    None (module doc)."""
    alg = decode(fn)
    if alg is None:
        return None
    dag = build_dag(alg)
    del alg
    if dag is None:
        return None
    if not np.all(np.isfinite(dag.value[dag.leaf == LEAF_CONST])):
        return None
    n_roots = int(f.nnz()) + int(g.nnz())
    if dag.out.size != n_roots:
        return None
    terms = split_terms(dag, dag.out)
    h, ok = term_hashes(dag, terms.node)
    rest = np.zeros(n_roots, bool)
    rest[terms.root[~ok]] = True
    use = ~rest[terms.root]
    # the objective's constant terms (root 0 when f has its nonzero) are one number
    nf = int(f.nnz())
    fc = use & (terms.root < nf) & (dag.leaf[terms.node] == LEAF_CONST)
    f_const = float(np.sum(terms.coef[fc] * dag.value[terms.node[fc]]))
    use &= ~fc
    blocks = group_terms(dag, terms.node[use], terms.root[use], terms.coef[use], h[use],
                         "sx")
    stats = {"instructions": int(dag.op.size), "terms": int(use.sum()),
             "templates": len(blocks), "roots_per_node": int(rest.sum())}
    return BulkRead(blocks, rest, f_const, stats)
