"""Binary addition chains -> n-ary sums.

CasADi has only binary ``+``/``-``: ``sum1(x)``, ``sumsqr(x)``, ``dot`` and
``mtimes`` expand to left-leaning chains ``((t0 + t1) + t2) + ...``.  caspar
groups an objective *term by term* (only an n-ary ``sum`` is split) and a chain
of 10^5 terms would be one giant template, so each root's *additive spine*
(its ``add``/``sub``/``neg``/``sum`` nodes) is rebuilt as one ``sum``:

    a + b - (c + d)   ->   sum(a, b, -c, -d)

A *scaled wide spine* -- ``c * S``, ``S * c`` or ``S / c`` with ``c`` a constant
and ``S`` a spine of at least :data:`SCALE_MIN_TERMS` terms -- is distributed
into its terms:

    a + 100 * (s_0 + ... + s_{n-1})   ->   sum(a, 100 * s_0, ..., 100 * s_{n-1})

Reason: kept whole, ``100 * S`` is one term, hence one template with one
instance whose straight-line code holds all n terms; deriving, generating and
compiling it grew superlinearly in n (chained Rosenbrock written as
``sumsqr(1 - x[:-1]) + 100 * sumsqr(x[1:] - x[:-1]**2)``: 4.5 s at n = 10^4,
killed for memory at 3 * 10^5).  Distributed, the n terms are n instances of
one template.  The value is the same sum rounded in another order (as any split
sum is); shorter scaled spines are left as they are, so small models keep their
arithmetic exactly.

A spine node reached by more than one spine edge (a partial sum shared by
several roots, as in cumulative sums ``s_i = s_{i-1} + x_i``, or one sum used
twice, as the flow of two identical parallel branches in a bus balance) with at
least :data:`SHARED_MIN_TERMS` non-constant terms is kept as a single term
instead of being copied into every user: the pass stays linear in the graph
size and every user of a shared sum sees the same term.  A shorter shared sum
is copied into each user like an unshared one: its users' terms are then the
same shapes whether the sum was written once or twice (a bounded cost: fewer
than SHARED_MIN_TERMS terms per edge).  A root is rebuilt only when its
spine has at least ``min_terms`` terms (per root: the objective is split into
terms for grouping, so every spine counts there; in a constraint a short spine
is harmless and rebuilding it would only cost nodes).
"""

from __future__ import annotations

_SPINE = frozenset(("add", "sub", "neg", "sum"))

#: a constant times a spine of at least this many terms is distributed into the terms
SCALE_MIN_TERMS = 8
#: a shared spine node with at least this many non-constant terms is one term of its
#: users; a shorter one is copied into each
SHARED_MIN_TERMS = 8


def _scaled(n):
    """``(c, S, divide)`` when ``n`` is ``c * S``, ``S * c`` or ``S / c`` with ``c`` a
    constant node and ``S`` a spine node, else None."""
    op = n.op
    if op == "mul":
        a, b = n.args
        if a.op == "const" and b.op in _SPINE:
            return a, b, False
        if b.op == "const" and a.op in _SPINE:
            return b, a, False
    elif op == "div":
        a, b = n.args
        if b.op == "const" and a.op in _SPINE:
            return b, a, True
    return None


def flatten_sums(g, roots: list, min_terms) -> list:
    """``roots`` with each additive spine of at least ``min_terms`` terms (an int,
    or one int per root) rebuilt as one n-ary ``sum`` (module doc)."""
    if isinstance(min_terms, int):
        min_terms = [min_terms] * len(roots)
    refs: dict[int, int] = {}
    seen: set[int] = set()
    scaled_of: set[int] = set()          # the S of every scaled spine met
    stack = []
    for r in roots:
        s = _scaled(r)
        if s is not None:
            refs[r.id] = refs.get(r.id, 0) + 1
            scaled_of.add(s[1].id)
            r = s[1]
        if r.op in _SPINE:
            refs[r.id] = refs.get(r.id, 0) + 1
            stack.append(r)
    while stack:  # count spine edges into each spine node, visiting each once
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        for a in n.args:
            s = _scaled(a)
            if s is not None:   # a scaled spine counts as a spine node, and so does S
                refs[a.id] = refs.get(a.id, 0) + 1
                scaled_of.add(s[1].id)
                if a.id not in seen:
                    seen.add(a.id)
                    a = s[1]
            if a.op in _SPINE:
                refs[a.id] = refs.get(a.id, 0) + 1
                if a.id not in seen:
                    stack.append(a)
    _mark_short_shared(refs, scaled_of, roots)
    return [_flatten(g, r, refs, k) if r.op in _SPINE or _scaled(r) is not None else r
            for r, k in zip(roots, min_terms)]


def _mark_short_shared(refs: dict, scaled_of: set, roots: list) -> None:
    """Set ``refs`` to 1 for every shared spine node that flattening meets (in a
    root's spine or the S of a scaled spine) with fewer than :data:`SHARED_MIN_TERMS`
    non-constant terms (short shared nodes below it expanded): such a node is copied
    into each user.  An S keeps its count (whether it is distributed depends on it)."""
    items: dict[int, int] = {}

    def below(n):
        s = _scaled(n)
        return s[1] if s is not None else n

    stack = [(below(r), False) for r in roots]
    while stack:  # post-order over the spine nodes flattening walks
        n, done = stack.pop()
        if n.op not in _SPINE or n.id in items:
            continue
        if not done:
            stack.append((n, True))
            stack.extend((below(a), False) for a in n.args)
            continue
        k = 0
        for a in n.args:
            if a.op in _SPINE:
                k += items[a.id] if refs.get(a.id, 0) <= 1 else 1
            elif a.op != "const":
                k += 1
        items[n.id] = k
        if refs.get(n.id, 0) > 1 and k < SHARED_MIN_TERMS and n.id not in scaled_of:
            refs[n.id] = 1


def _spine_terms(root, refs) -> list:
    """``[(node, negated)]``: the terms of ``root``'s spine in order; a shared spine
    node (``refs > 1``) and any non-spine node is a term."""
    terms = []
    stack = [(root, False)]
    while stack:
        n, neg = stack.pop()
        op = n.op
        if n is not root and (op not in _SPINE or refs.get(n.id, 0) > 1):
            terms.append((n, neg))
        elif op == "add":
            stack.append((n.args[1], neg))
            stack.append((n.args[0], neg))
        elif op == "sub":
            stack.append((n.args[1], not neg))
            stack.append((n.args[0], neg))
        elif op == "neg":
            stack.append((n.args[0], not neg))
        else:  # sum
            stack.extend((a, neg) for a in reversed(n.args))
    return terms


def _flatten(g, root, refs, min_terms):
    out = []
    neg, mul, div = g.neg, g.mul, g.div
    top = _spine_terms(root, refs) if root.op in _SPINE else [(root, False)]
    for n, s in top:
        sc = _scaled(n) if n.op in ("mul", "div") and refs.get(n.id, 0) == 1 else None
        if sc is not None and refs.get(sc[1].id, 0) > 1:
            sc = None   # S is shared: one term, as any shared partial sum
        inner = _spine_terms(sc[1], refs) if sc is not None else ()
        if len(inner) < SCALE_MIN_TERMS:
            out.append(neg(n) if s else n)
            continue
        c, _, divide = sc
        # nested scaled spines inside S stay single terms of S (one level per root)
        for t, ts in inner:
            u = div(t, c) if divide else mul(c, t)
            out.append(neg(u) if s != ts else u)
    if len(out) < max(min_terms, 3):
        return root
    return g.sum(out)
