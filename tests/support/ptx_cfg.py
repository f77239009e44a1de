"""The control-flow graph of one PTX function, its natural loops and their exits.

A PTX function body is split into basic blocks at labels (``$L__BB1_7:``) and after
branches (``[@%p] bra[.uni] $L;``) and returns; a predicated branch or return also falls
through.  A back edge u -> v is one whose target dominates its source; v's natural
loop is v plus every block that reaches u without passing v.  A loop's exits are the
blocks outside it that its blocks branch to.

Used by tests/compiled/test_cuda_compiles.py: where the kernel's barrier-update loop left
through two blocks, the threads of a warp that left it on different passes ran apart for
the rest of their solves (docs/compiled-ipm-cuda.md, "Threads of a warp that never meet
again"); with one exit block they run together.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

_LABEL = re.compile(r"^(\$\w+):$")
_BRANCH = re.compile(r"^(@!?%p\d+\s+)?bra(?:\.uni)?\s+(\$\w+);")
_RETURN = re.compile(r"^(@!?%p\d+\s+)?ret")
_CALLEE = re.compile(r"^(_Z\w+),?$")


@dataclass(frozen=True)
class Loop:
    """A natural loop: ``header``, its ``blocks``, the ``exits`` (blocks outside it that
    it branches to) and the functions its blocks call (PTX names)."""
    header: str
    blocks: frozenset
    exits: frozenset
    callees: frozenset


def function_body(ptx: str, name: str) -> list[str]:
    """The lines between the braces of the definition of the function whose PTX name
    contains ``name`` (a declaration, ending in ``;``, is skipped)."""
    lines = ptx.splitlines()
    for i, line in enumerate(lines):
        if line.startswith((".func", ".weak .func", ".visible .func")) and name in line:
            j = i + 1
            while j < len(lines) and not lines[j].startswith(("{", ".func", ".weak",
                                                               ".visible")):
                j += 1
            if j < len(lines) and lines[j].startswith("{"):
                k = lines.index("}", j)
                return lines[j + 1:k]
    raise KeyError(f"no definition of a function named like {name!r} in the PTX")


def _blocks(body: list[str]):
    order, lines, succ = ["entry"], {"entry": []}, defaultdict(list)
    cur, ended, anon = "entry", False, 0

    def start(name):
        nonlocal cur
        order.append(name)
        lines[name] = []
        cur = name

    for raw in body:
        text = raw.strip()
        label = _LABEL.match(text)
        if label:
            if not ended:
                succ[cur].append(label.group(1))
            start(label.group(1))
            ended = False
            continue
        if not text or text.startswith("//"):
            continue
        if ended:                       # unreachable code after a jump or return
            anon += 1
            start(f"after{anon}")
            ended = False
        lines[cur].append(text)
        branch, ret = _BRANCH.match(text), _RETURN.match(text)
        if branch:
            succ[cur].append(branch.group(2))
        if (branch or ret) and (branch or ret).group(1):     # predicated: falls through
            anon += 1
            succ[cur].append(f"after{anon}")
            start(f"after{anon}")
        elif branch or ret:
            ended = True
    return order, lines, succ


def loops(ptx: str, function: str) -> list[Loop]:
    """The natural loops of ``function``, largest first."""
    order, lines, succ = _blocks(function_body(ptx, function))
    preds = defaultdict(list)
    for u in order:
        for v in succ[u]:
            preds[v].append(u)
    dom = {n: set(order) for n in order}
    dom["entry"] = {"entry"}
    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            ps = [dom[p] for p in preds[n]]
            new = (set.intersection(*ps) if ps else set()) | {n}
            if new != dom[n]:
                dom[n], changed = new, True
    bodies = defaultdict(set)
    for u in order:
        for v in succ[u]:
            if v in dom[u]:
                body, stack = {v}, [u]
                while stack:
                    x = stack.pop()
                    if x not in body:
                        body.add(x)
                        stack.extend(preds[x])
                bodies[v] |= body
    found = []
    for header, body in bodies.items():
        exits = {v for u in body for v in succ[u] if v not in body}
        callees = {m.group(1) for b in body for t in lines[b] if (m := _CALLEE.match(t))}
        found.append(Loop(header, frozenset(body), frozenset(exits), frozenset(callees)))
    return sorted(found, key=lambda lp: -len(lp.blocks))
