"""Chains of single-use additions, as caspar's per-node program fuses them.

:func:`.program._fuse_sums` turns a chain of ``+``/``-`` whose links are used once, each
by the next link, into one n-ary ``sum`` (the constants of which ``Graph.sum`` adds up
and moves last).  These arrays say which DAG nodes are such links and which chain each
ADD/SUB node belongs to; computed once per DAG.
"""

from __future__ import annotations

import numpy as np

from . import optable as T
from .sxdag import SXDag, native, walks

_ADD, _SUB = T.CODES["OP_ADD"], T.CODES["OP_SUB"]


def program_uses(dag: SXDag) -> np.ndarray:
    """int64 (K,): how many instruction arguments and outputs read each node."""
    got = getattr(dag, "_uses", None)
    if got is None and native() is not None:
        got = dag._uses = native().program_uses(dag.arg0, dag.arg1, dag.out)
    if got is None:
        K = dag.op.size
        a0, a1 = dag.arg0, dag.arg1
        got = dag._uses = (np.bincount(a0[a0 >= 0], minlength=K)
                           + np.bincount(a1[a1 >= 0], minlength=K)
                           + np.bincount(dag.out, minlength=K))
    return got


def sum_chains(dag: SXDag):
    """``(head, in_sum)`` over the K nodes: the head of the chain of single-use
    additions each ADD/SUB node belongs to (:func:`.program._fuse_sums` fuses a link
    used once, by another ADD/SUB, into its user), and whether that chain has three
    terms or more (caspar builds it as one ``sum``).  Computed once per DAG."""
    got = getattr(dag, "_chains", None)
    if got is not None:
        return got
    op, a0, a1 = dag.op, dag.arg0, dag.arg1
    if native() is not None:
        dag._chains = native().sum_chains(op, a0, a1, program_uses(dag), _ADD, _SUB)
        return dag._chains
    K = op.size
    chain = (op == _ADD) | (op == _SUB)
    uses = program_uses(dag)
    ch = np.flatnonzero(chain)
    user = np.full(K, -1, np.int64)
    user[a0[ch]] = ch
    user[a1[ch]] = ch
    fused = chain & (uses == 1) & (user >= 0)
    head = walks(dag.compiled).chain_heads(user, fused)                # users follow their links
    has_link = np.zeros(K, bool)
    has_link[user[fused]] = True
    in_sum = chain & (fused | has_link)
    dag._chains = (head, in_sum)
    return dag._chains
