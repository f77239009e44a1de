"""The compiled loops of :mod:`.sxdecode`: one pass over the exported program text.

casadi's MATLAB export of an SXFunction is one line per instruction (``sxdecode``'s
docstring gives the forms).  :func:`scan_lines` reads every line once, in order:

* ``starts[k]``  int64: the byte offset of line k;
* ``keys[k]``    uint64: a 64-bit hash of line k's *skeleton* (its bytes with every
  digit removed, and the skeleton's length) -- lines of one form share it;
* ``nrun[k]``    int64: the number of maximal digit runs on line k;
* ``tok``        int64 (sum nrun): every digit run's decimal value, in text order
  (runs longer than 18 digits -- the fraction of a ``%.16e`` constant has 16 -- are
  never operands; they are read modulo 2^64 and ignored).

:func:`fields` then picks each instruction's operands out of ``tok`` with the per-form
run numbers of ``sxdecode``'s calibrated table.

Compiled by Numba once per machine (``cache=True``: next to this file, or Numba's
per-user cache where that is read-only); importing this module compiles nothing.
Both loops are linear in the text's length and allocate only their outputs.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def scan_lines(buf, K, capacity):
    """``(ok, starts, keys, nrun, tok)`` of the first K lines of ``buf`` (uint8, each
    line ending in a newline): module docstring.  ``ok`` is 1; 0 when ``buf`` does not
    hold exactly K lines; -1 when more than ``capacity`` digit runs were found (the
    caller retries with a larger capacity)."""
    starts = np.empty(K, np.int64)
    keys = np.empty(K, np.uint64)
    nrun = np.zeros(K, np.int64)
    tok = np.empty(capacity, np.int64)
    n = buf.size
    line = 0
    t = 0
    pos = 0
    while pos < n:
        if line >= K:
            return 0, starts, keys, nrun, tok[:t]
        starts[line] = pos
        h = _FNV_OFFSET
        length = 0
        runs = 0
        value = np.uint64(0)
        in_run = False
        while True:
            if pos >= n:                      # a last line without its newline
                return 0, starts, keys, nrun, tok[:t]
            c = buf[pos]
            pos += 1
            if 48 <= c <= 57:
                if in_run:
                    value = value * np.uint64(10) + np.uint64(c - 48)
                else:
                    in_run = True
                    value = np.uint64(c - 48)
                continue
            if in_run:
                if t >= capacity:
                    return -1, starts, keys, nrun, tok[:t]
                tok[t] = np.int64(value)
                t += 1
                runs += 1
                in_run = False
            if c == 10:
                break
            h = (h ^ np.uint64(c)) * _FNV_PRIME
            length += 1
        h = (h ^ (np.uint64(length) * _MIX)) * _FNV_PRIME
        h ^= h >> np.uint64(29)
        keys[line] = h
        nrun[line] = runs
        line += 1
    if line != K:
        return 0, starts, keys, nrun, tok[:t]
    return 1, starts, keys, nrun, tok[:t]


@njit(cache=True, nogil=True)
def fields(inv, nrun, tok, first_run, op_f, ia_f, ib_f, ii_f, inz_f, output_op):
    """``(op, w, a, b, idx, nz)`` int64 (K,) of the K lines: line k of form
    ``f = inv[k]`` has its runs at ``tok[first_run[k]:first_run[k] + nrun[k]]``;
    ``op_f[f]`` its op, ``ia_f``/``ib_f``/``ii_f``/``inz_f`` the run numbers of operand
    a, operand b, index and nonzero (-1: none).  ``w`` is the line's first run (the
    work slot written), -1 on an ``output_op`` line; ``nz`` is the 1-based printed
    nonzero less one."""
    K = inv.size
    op = np.empty(K, np.int64)
    w = np.empty(K, np.int64)
    a = np.empty(K, np.int64)
    b = np.empty(K, np.int64)
    idx = np.empty(K, np.int64)
    nz = np.empty(K, np.int64)
    for k in range(K):
        f = inv[k]
        o = first_run[k]
        op[k] = op_f[f]
        w[k] = -1 if op_f[f] == output_op or nrun[k] == 0 else tok[o]
        a[k] = tok[o + ia_f[f]] if ia_f[f] >= 0 else -1
        b[k] = tok[o + ib_f[f]] if ib_f[f] >= 0 else -1
        idx[k] = tok[o + ii_f[f]] if ii_f[f] >= 0 else -1
        nz[k] = tok[o + inz_f[f]] - 1 if inz_f[f] >= 0 else -1
    return op, w, a, b, idx, nz
