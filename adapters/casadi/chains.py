"""Deep chains of calls in a casadi MX Function: which Functions the adapter keeps as
opaque calls (:mod:`.compiler`'s module docstring says why: inlined, single shooting's
symbolic derivatives grow as N^3).

A Function called :data:`CHAIN_MIN_DEPTH` times or more on one path from an input to an
output -- counted through nested Functions (:func:`call_path_counts`) -- is chained
(:func:`chained_functions`).  The body of a called Function with at most
:data:`CHAIN_UNIT_MAX_INPUTS` input nonzeros is not searched for chains of its own (the
compiler's rule; each instance inlined is an expression of those few inputs), and the
calls inside one call of such a body count as a short chain (at most
``CHAIN_MIN_DEPTH - 1``) on the paths through it: a chain is deep only across calls.

The other walk of the call graph: :func:`assertion_sites`, the Functions whose MX body
holds an assertion (``attachAssert``), which ``expand()`` drops (:mod:`.assertions`).
"""

from __future__ import annotations

from . import optable as T

_CALL_CODE = T.CODES["OP_CALL"]
_ASSERTION_CODE = T.CODES["OP_ASSERTION"]
#: calls of one Function at this call depth or deeper make it an opaque call
CHAIN_MIN_DEPTH = 16
#: the body of a called Function (a Map's instance function, a Function kept as a call)
#: with at most this many input nonzeros is not searched for chains of its own: inlined,
#: however deep its chain, each instance is one expression of these few inputs, whose
#: derivatives stay that small (casadi's sysid example: a multiple-shooting sample of ten
#: RK4 steps calls the ODE 40 times on a path; as opaque calls, set-up at N = 200 samples
#: took 27 s, inlined 3.2 s).  Chains found from the NLP itself are not affected.
CHAIN_UNIT_MAX_INPUTS = 32


def call_path_counts(fn, memo: dict) -> dict:
    """For the Function ``fn``: {hash(g): (c, g)} with c the most calls of g on one path
    from an input of ``fn`` to an output, counted through nested Functions (a call of an
    MX Function adds one for itself plus its own counts: ``F.mapaccum(100)`` is ten
    chained calls of ten chained calls of F, 100 on a path), each count of a body of at
    most :data:`CHAIN_UNIT_MAX_INPUTS` input nonzeros taken up to CHAIN_MIN_DEPTH - 1 per
    call.  Maps count nothing (their instances run side by side); SX bodies hold no
    calls.  ``memo``:
    hash(Function) -> (Function, its counts), shared across calls."""
    key = hash(fn)        # casadi hashes a Function by its pointer: fn is kept in memo
    hit = memo.get(key)
    if hit is not None:
        return hit[1]
    memo[key] = (fn, {})                   # guards against recursion
    if not fn.is_a("MXFunction") or fn.is_a("Map", True) or not call_nodes(fn):
        out = {}        # (no calls: skip the slower pass below over every instruction)
    else:
        slots: dict = {}
        out = {}
        for k in range(fn.n_instructions()):
            ins = [slots[i] for i in fn.instruction_input(k) if i in slots]
            counts = _merge_max(ins)
            if fn.instruction_id(k) == _CALL_CODE:
                g = fn.instruction_MX(k).which_function()
                if g.is_a("MXFunction") or g.is_a("SXFunction"):
                    counts = dict(counts)
                    # inside one call of a body of few inputs a chain is short whatever
                    # its count: inlined, it is an expression of those inputs (an RK4
                    # interval of multiple shooting: 4 M calls of the ODE on 3 inputs);
                    # only chains through several such calls add up to a deep one
                    cap = (CHAIN_MIN_DEPTH - 1 if sum(g.nnz_in(i) for i in range(g.n_in()))
                           <= CHAIN_UNIT_MAX_INPUTS else None)
                    for h, (c, f) in call_path_counts(g, memo).items():
                        c = c if cap is None else min(c, cap)
                        counts[h] = (counts.get(h, (0, f))[0] + c, f)
                    if not g.is_a("Map", True):
                        counts[hash(g)] = (counts.get(hash(g), (0, g))[0] + 1, g)
            for o in fn.instruction_output(k):
                slots[o] = counts
            out = _merge_max([out, counts])
    memo[key] = (fn, out)
    return out


def _merge_max(dicts) -> dict:
    """The entrywise maximum of count dicts (the first one itself when it is alone)."""
    dicts = [d for d in dicts if d]
    if len(dicts) <= 1:
        return dicts[0] if dicts else {}
    out = dict(dicts[0])
    for d in dicts[1:]:
        for h, cf in d.items():
            if cf[0] > out.get(h, (0, None))[0]:
                out[h] = cf
    return out


def chained_functions(fn, min_depth: int = CHAIN_MIN_DEPTH, memo=None) -> list:
    """The Functions (MX or SX bodies, not Maps) that ``fn`` calls, directly or through
    nested Functions, at least ``min_depth`` times on one path (:func:`call_path_counts`)."""
    counts = call_path_counts(fn, {} if memo is None else memo)
    return [f for c, f in counts.values() if c >= min_depth]


def instruction_ids(fn) -> list[int]:
    """The op code of each instruction of an MXFunction's program, in order."""
    return list(map(fn.instruction_id, range(fn.n_instructions())))


def call_nodes(fn, ids: list[int] | None = None) -> list:
    """The call nodes of an MXFunction's instruction program (``ids``: its
    :func:`instruction_ids` where the caller has them)."""
    ids = instruction_ids(fn) if ids is None else ids
    return [fn.instruction_MX(k) for k, code in enumerate(ids) if code == _CALL_CODE]


def assertion_sites(fn, ids: list[int] | None = None) -> list[str]:
    """The names of the Functions run by calling ``fn`` (``fn`` included) whose MX body
    holds an assertion, each once, callees first (``ids``: ``fn``'s
    :func:`instruction_ids` where the caller has them)."""
    found: list[str] = []
    _sites(fn, {}, found, ids)
    return found


def _sites(fn, memo: dict, found: list, ids=None) -> None:
    key = hash(fn)              # casadi hashes a Function by its internal pointer
    if key in memo:
        return
    memo[key] = fn              # held: the pointer is not reused while walking
    for name in fn.get_function():
        _sites(fn.get_function(name), memo, found)
    if fn.is_a("MXFunction") and _ASSERTION_CODE in set(instruction_ids(fn) if ids is None
                                                         else ids):
        found.append(fn.name())
