"""The bulk reader of an SX ``nlpsol`` problem: instruction arrays to template blocks.

    fn   = Function('caspar_nlp', [x, p], [f, g])      casadi builds the program
    alg  = sxexport.program(fn)                          the instructions as arrays
    dag  = sxdag.build_dag(alg)                          slots resolved: a DAG
    ins  = sxterms.split_instances(dag, nf)              the per-node reader's instances
    h    = sxhash.term_hashes(dag, ins.node)             shape and value hashes
    blk  = sxgroup.group_instances(dag, ins, h, ...)     its pattern groups, as blocks

The result is the per-node reader's model in block form: the same instances, grouped
into the same templates in the same order with the same tables, so
:class:`~caspar_backend.problem.Problem` makes the same pattern groups and every
evaluation and derivative is bit for bit the per-node reader's.  No step runs once
per instruction or per instance in Python: each is a handful of NumPy passes over the
arrays or a compiled loop (C++: :mod:`.sxexport`, :mod:`.sxwalks_native`; else Numba),
plus Python work per template class (building it from one representative).

The per-node reader builds its graph with exact simplifications (``x + 0``,
``x * 1``, ``x - x``, constant folding, ...; :mod:`caspar_backend.expr`) and
hash-consing.  The bulk reader takes a program only where none of them changes a
structure it reads (:func:`_plain`): no op on constants only, no constant 0 or +-1
where ``add``/``sub``/``mul``/``div`` would drop it, no ``--x``, no ``x - x``, no two
nodes outside the hashed trees that hash-consing would merge (a partial sum built
twice).  Programs it does not take -- those, calls of other Functions, ops caspar
refuses, non-finite constants, terms deeper than :data:`~.sxhash.MAX_DEPTH` or larger
than :data:`~.sxhash.MAX_LEAVES`, instances :mod:`.sxterms` or :mod:`.sxgroup` do not
reproduce -- return None and the whole problem goes the per-node way (which also
raises the precise errors).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import optable as T
from .sxdag import LEAF_CONST, NOT_LEAF, build_dag, native
from .sxexport import program
from .sxgroup import group_instances
from .sxmerge import canonical
from .sxchains import sum_chains
from .sxterms import split_instances

#: programs of at least this many instructions are decoded and walked by the Numba
#: loops (sxscan, sxwalks), smaller ones by NumPy passes (sxdecode._decode_numpy,
#: sxwalks_numpy), the same results -- where caspar's C++ libraries cannot be built:
#: otherwise the program is read through casadi's C++ API (sxexport) and walked by the
#: C++ loops (sxwalks_native) at every size.  Measured on the 2-core VM (fresh
#: processes, single-sum Rosenbrock): Numba's import and LLVM start cost 0.4-1 s, its
#: loops save about 1 us per instruction over the NumPy passes -- even at 8 * 10^5
#: instructions, 1.5 s either way; at 8 * 10^6 the loops take the read from 29.6 s to
#: 16.5 s
COMPILED_MIN_INSTRUCTIONS = 1_000_000

_OUTPUT = T.CODES["OP_OUTPUT"]
_C = {k: T.CODES[k] for k in ("OP_ADD", "OP_SUB", "OP_MUL", "OP_DIV", "OP_NEG",
                              "OP_IF_ELSE_ZERO", "OP_FMOD", "OP_COPYSIGN")}
#: the op codes :func:`.sxwalks_native.plain` takes, in its order
_PLAIN_CODES = np.array(list(_C.values()) + [_OUTPUT], np.int64)


@dataclass(eq=False)
class BulkRead:
    """What the bulk reader produced (final): the per-node reader's objective and
    constraint groups as blocks (constraint rows are g indices)."""

    objective_blocks: list
    constraint_blocks: list
    stats: dict = field(default_factory=dict)


def read_bulk(fn, f, g, prog=None, compiled: bool | None = None) -> BulkRead | None:
    """Template blocks of the SX problem whose Function ``fn = (x, p) -> (f, g)``, or
    None (module doc); ``prog`` its program when the caller has it: an
    :class:`~.sxdecode.Algorithm` (:func:`.sxexport.program`) or the exported text
    (:func:`.sxdecode.program_text`); ``compiled``: by the compiled loops (None: from
    :data:`COMPILED_MIN_INSTRUCTIONS` instructions), the same result either way."""
    if compiled is None:
        compiled = fn.n_instructions() >= COMPILED_MIN_INSTRUCTIONS
    alg = prog if prog is not None and not isinstance(prog, bytes) else \
        program(fn, prog, compiled)
    if alg is None:
        return None
    dag = build_dag(alg, compiled)
    del alg
    if dag is None:
        return None
    if not np.all(np.isfinite(dag.value[dag.leaf == LEAF_CONST])):
        return None
    nf = int(f.nnz())
    if dag.out.size != nf + int(g.nnz()):
        return None
    ins = split_instances(dag, nf)
    if ins is None:
        return None
    node = np.maximum(ins.node, 0)
    h, ok, vh, hashed = ins.hashes
    if not _plain(dag, vh, hashed, ins.gathered):
        return None
    found = group_instances(dag, ins, h[node], ok[node], vh, nf, "sx")
    if found is None:
        return None
    obj, con = found
    stats = {"instructions": int(dag.op.size), "instances": int(ins.root.size),
             "templates": len(obj) + len(con)}
    return BulkRead(obj, con, stats)


def _plain(dag, vh, hashed, gathered) -> bool:
    """True when caspar's graph builds every node of the program as it is (module
    docstring): no simplification fires and hash-consing merges nothing the value
    hashes do not see."""
    nat = native()
    if nat is not None:                         # the same rules in one C++ loop
        return nat.plain(dag.op, dag.arg0, dag.arg1, dag.leaf, dag.value, vh, hashed,
                         _PLAIN_CODES, NOT_LEAF, LEAF_CONST, sum_chains(dag)[0], gathered)
    op, a0, a1, leaf, val = dag.op, dag.arg0, dag.arg1, dag.leaf, dag.value
    inner = (leaf == NOT_LEAF) & (op != _OUTPUT)
    has0, has1 = a0 >= 0, a1 >= 0
    c0 = has0 & (leaf[np.maximum(a0, 0)] == LEAF_CONST)
    c1 = has1 & (leaf[np.maximum(a1, 0)] == LEAF_CONST)
    if np.any(inner & c0 & (~has1 | c1)):                # constants only: folded
        return False
    # the rules per constant argument, on the nodes having one: a constant first
    # argument (value v) ...
    i0 = np.flatnonzero(c0)
    o, v = op[i0], val[a0[i0]]
    zero, unit = v == 0.0, (v == 1.0) | (v == -1.0)
    if np.any((((o == _C["OP_ADD"]) | (o == _C["OP_SUB"]) | (o == _C["OP_DIV"])) & zero)
              | ((o == _C["OP_MUL"]) & (zero | unit))
              | (o == _C["OP_NEG"]) | (o == _C["OP_IF_ELSE_ZERO"])
              | (o == _C["OP_FMOD"]) | (o == _C["OP_COPYSIGN"])):
        return False
    # ... a constant second argument ...
    i1 = np.flatnonzero(c1)
    o, v = op[i1], val[a1[i1]]
    zero, unit = v == 0.0, (v == 1.0) | (v == -1.0)
    if np.any((((o == _C["OP_ADD"]) | (o == _C["OP_SUB"]) | (o == _C["OP_IF_ELSE_ZERO"]))
               & zero)
              | ((o == _C["OP_MUL"]) & (zero | unit)) | ((o == _C["OP_DIV"]) & (v == 1.0))
              | (o == _C["OP_FMOD"]) | (o == _C["OP_COPYSIGN"])):
        return False
    # ... and --x
    neg = np.flatnonzero((op == _C["OP_NEG"]) & has0)
    if np.any(op[a0[neg]] == _C["OP_NEG"]):
        return False
    # x - x, if_else_zero(x, x): canonical argument ids (the value hash where defined,
    # else the node itself) of those two ops' nodes only
    two = np.flatnonzero((op == _C["OP_SUB"]) | (op == _C["OP_IF_ELSE_ZERO"]))
    k0 = np.where(has0[two], canonical(dag, vh, hashed, a0[two]), np.uint64(0))
    k1 = np.where(has1[two], canonical(dag, vh, hashed, a1[two]), np.uint64(1))
    if np.any((k0 == k1) & ((op[two] != _C["OP_SUB"]) | has1[two])):
        return False
    if not _chain_constants_ok(dag, gathered):
        return False
    return True


def _chain_constants_ok(dag, gathered) -> bool:
    """No chain of single-use additions inside a template holds two constants: the
    per-node program fuses such a chain into one ``sum`` (:func:`.program._fuse_sums`)
    whose constants it adds up into one data slot (and drops when they cancel), which
    the templates' tables do not reproduce.  The chains of rebuilt roots' spines
    (``gathered``) are summed by :func:`.sxterms.split_instances` itself."""
    op, a0, a1, leaf = dag.op, dag.arg0, dag.arg1, dag.leaf
    head, _ = sum_chains(dag)
    ch = np.flatnonzero((op == _C["OP_ADD"]) | (op == _C["OP_SUB"]))
    is_c = leaf == LEAF_CONST
    heads = [head[ch[(a[ch] >= 0) & is_c[np.maximum(a[ch], 0)]]] for a in (a0, a1)]
    n_const = np.bincount(np.concatenate(heads), minlength=op.size)
    n_const[gathered] = 0
    return bool(np.all(n_const <= 1))

