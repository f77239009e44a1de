"""Binary addition chains -> n-ary sums.

CasADi has only binary ``+``/``-``: ``sum1(x)``, ``sumsqr(x)``, ``dot`` and
``mtimes`` expand to left-leaning chains ``((t0 + t1) + t2) + ...``.  caspar
groups an objective *term by term* (only an n-ary ``sum`` is split) and a chain
of 10^5 terms would be one giant template, so each root's *additive spine*
(its ``add``/``sub``/``neg``/``sum`` nodes) is rebuilt as one ``sum``:

    a + b - (c + d)   ->   sum(a, b, -c, -d)

A spine node reached by more than one spine edge (a partial sum shared by
several roots, as in cumulative sums ``s_i = s_{i-1} + x_i``) is kept as a
single term instead of being copied into every user: the pass stays linear in
the graph size and every user of a shared sum sees the same term, so
structurally identical roots stay identical.  A root is rebuilt only when its
spine has at least ``min_terms`` terms (per root: the objective is split into
terms for grouping, so every spine counts there; in a constraint a short spine
is harmless and rebuilding it would only cost nodes).
"""

from __future__ import annotations

_SPINE = frozenset(("add", "sub", "neg", "sum"))


def flatten_sums(g, roots: list, min_terms) -> list:
    """``roots`` with each additive spine of at least ``min_terms`` terms (an int,
    or one int per root) rebuilt as one n-ary ``sum`` (module doc)."""
    if isinstance(min_terms, int):
        min_terms = [min_terms] * len(roots)
    refs: dict[int, int] = {}
    seen: set[int] = set()
    stack = []
    for r in roots:
        if r.op in _SPINE:
            refs[r.id] = refs.get(r.id, 0) + 1
            stack.append(r)
    while stack:  # count spine edges into each spine node, visiting each once
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        for a in n.args:
            if a.op in _SPINE:
                refs[a.id] = refs.get(a.id, 0) + 1
                if a.id not in seen:
                    stack.append(a)
    return [_flatten(g, r, refs, k) if r.op in _SPINE else r
            for r, k in zip(roots, min_terms)]


def _flatten(g, root, refs, min_terms):
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
    if len(terms) < max(min_terms, 3):
        return root
    neg = g.neg
    return g.sum([neg(n) if s else n for n, s in terms])
