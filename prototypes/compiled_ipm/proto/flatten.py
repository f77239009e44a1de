"""Source rewrite: the tuples of arrays (E, S, V, IT, Q, KT, L, DR) become four flat
arrays ``Fb, FO, Ib, IO`` (every float64 array a slice of Fb, every int64 array a slice
of Ib, FO/IO their offsets).  Numba then passes 4 arrays per call instead of ~150 (each
flattened into ~7 scalars), and a CUDA kernel would take a few pointers.

``TUPLE_NAMES[k][i] = (kind, id, ncols)``: the element i of tuple k is float ('f') or
int ('i') array ``id``; ``ncols`` > 0 for a 2-D array (reshaped in place)."""
from __future__ import annotations

import re

import numpy as np

TUPLES = ("E", "S", "V", "IT", "Q", "KT", "L", "DR")

ACCESSORS = '''

@njit(cache=True, _nrt=False, error_model="numpy", inline="always")
def _F(Fb, FO, k):
    return Fb[FO[k]:FO[k + 1]]


@njit(cache=True, _nrt=False, error_model="numpy", inline="always")
def _I(Ib, IO, k):
    return Ib[IO[k]:IO[k + 1]]


@njit(cache=True, _nrt=False, error_model="numpy", inline="always")
def _I2(Ib, IO, k, c):
    a = Ib[IO[k]:IO[k + 1]]
    return a.reshape(((IO[k + 1] - IO[k]) // c, c))
'''


def layout(tuples):
    """tuples: dict name -> tuple of arrays.  Returns (mapping, float arrays, int arrays)."""
    fl, il, mapping = [], [], {}
    for name in TUPLES:
        for i, a in enumerate(tuples[name]):
            a = np.asarray(a)
            if a.dtype == np.float64:
                mapping[(name, i)] = ("f", len(fl), 0)
                fl.append(a)
            else:
                mapping[(name, i)] = ("i", len(il), a.shape[1] if a.ndim == 2 else 0)
                il.append(a)
    return mapping, fl, il


def pack(arrays, dtype):
    offs = np.zeros(len(arrays) + 1, np.int64)
    offs[1:] = np.cumsum([a.size for a in arrays])
    buf = np.zeros(max(int(offs[-1]), 1), dtype)
    for a, o in zip(arrays, offs):
        buf[o:o + a.size] = a.ravel()
    return buf, offs


def _split_args(s):
    """Split a call's argument text at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _rewrite_calls(src, names):
    """In every call or def of a function in ``names``, drop the tuple arguments and put
    ``Fb, FO, Ib, IO`` first (the same rule for defs and calls keeps positions)."""
    pat = re.compile(r"\b(" + "|".join(sorted(names, key=len, reverse=True)) + r")\(")
    out, pos = [], 0
    for m in pat.finditer(src):
        if m.start() < pos:
            continue
        start = m.end()
        depth, j = 1, start
        while depth:
            if src[j] == "(":
                depth += 1
            elif src[j] == ")":
                depth -= 1
            j += 1
        inner = src[start:j - 1]
        args = _split_args(inner)
        keep = [a for a in args if a.strip() not in TUPLES]
        if len(keep) != len(args):
            lead = " " if inner.startswith("\n") else ""
            new = ", ".join(["Fb, FO, Ib, IO"] + [a.strip() for a in keep])
            out.append(src[pos:start] + new + ")")
        else:
            out.append(src[pos:j])
        pos = j
    out.append(src[pos:])
    return "".join(out)


def flatten_source(src, mapping):
    names = set(re.findall(r"^def (\w+)\(", src, flags=re.M))
    src = _rewrite_calls(src, names)

    def sub(m):
        kind, k, c = mapping[(m.group(1), int(m.group(2)))]
        if kind == "f":
            return f"_F(Fb, FO, {k})"
        return f"_I2(Ib, IO, {k}, {c})" if c else f"_I(Ib, IO, {k})"
    src = re.sub(r"\b(" + "|".join(TUPLES) + r")\[(\d+)\]", sub, src)
    # the helpers go right after the common part's imports
    i = src.index("\n@njit")
    return src[:i] + ACCESSORS + src[i:]
