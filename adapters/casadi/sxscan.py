"""The compiled loop of :mod:`.sxdecode`: the exported program text read in one pass.

casadi's MATLAB export of an SXFunction is one line per instruction (``sxdecode``'s
docstring gives the forms).  A line's *skeleton* is the line with its digits deleted
(``  w = (w+w);``); its *runs* are its maximal digit runs, read as decimal integers.
:func:`skeleton_hash` hashes a skeleton (64-bit FNV-1a over its bytes, then its
length mixed in); :class:`FormTable` holds the calibrated forms by that hash, in an
open-addressing table a compiled loop can probe.

:func:`decode_lines` reads the K lines once, in order: for each line it hashes the
skeleton and parses the runs as it goes, finds the line's form, checks that the line
has as many runs as the form says, and writes the instruction's fields from the runs
the form names.  A line whose skeleton is not in the table, or whose run count
differs, stops the loop (the caller reads the program the per-instruction way).

Compiled by Numba once per machine (``cache=True``: next to this file, or Numba's
per-user cache where that is read-only); importing this module compiles nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MIX = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1
#: runs a line may hold that the fields can name (a form's operand run numbers are
#: smaller); a line with more runs is still counted exactly
MAX_RUNS = 8

#: decode_lines' status: all lines read; a skeleton not in the table; a line whose run
#: count is not its form's; not exactly K lines
OK, UNKNOWN_FORM, RUN_COUNT, LINE_COUNT = 0, 1, 2, 3


def skeleton_hash(skeleton: bytes) -> int:
    """The 64-bit hash of a skeleton (module docstring), as :func:`decode_lines`
    computes it: FNV-1a over the bytes, then ``(h ^ len * MIX) * PRIME``, then
    ``h ^= h >> 29`` (all modulo 2^64)."""
    h = _FNV_OFFSET
    for c in skeleton:
        h = ((h ^ c) * _FNV_PRIME) & _MASK
    h = ((h ^ ((len(skeleton) * _MIX) & _MASK)) * _FNV_PRIME) & _MASK
    return h ^ (h >> 29)


@dataclass(frozen=True, eq=False)
class FormTable:
    """Final.  The calibrated forms by skeleton hash.  ``slot_key`` uint64 (T,) and
    ``slot_form`` int64 (T,) (-1: empty) are an open-addressing table of T = 2^j slots
    probed linearly from ``hash & (T - 1)``; form f is ``op[f]``, ``runs[f]`` (its
    run count), and the run numbers of operand a, operand b, index and nonzero
    (``ia``, ``ib``, ``ii``, ``inz``; -1: none)."""

    slot_key: np.ndarray
    slot_form: np.ndarray
    op: np.ndarray
    runs: np.ndarray
    ia: np.ndarray
    ib: np.ndarray
    ii: np.ndarray
    inz: np.ndarray

    @classmethod
    def build(cls, forms: dict) -> FormTable:
        """From ``{skeleton str: (op, runs, ia, ib, ii, inz)}`` (entries whose form is
        None -- skeletons printed alike for ops read differently -- are left out, so
        their lines are unknown).  Two skeletons of one hash: ValueError."""
        items = [(skeleton_hash(s.encode("ascii")), f) for s, f in forms.items()
                 if f is not None and all(0 <= c for c in f[:2])
                 and all(c < MAX_RUNS for c in f[2:])]
        if len({h for h, _ in items}) != len(items):
            raise ValueError("two line forms share a skeleton hash")
        T = 1 << max(4, (4 * len(items) - 1).bit_length())
        slot_key = np.zeros(T, np.uint64)
        slot_form = np.full(T, -1, np.int64)
        for f, (h, _) in enumerate(items):
            i = h & (T - 1)
            while slot_form[i] >= 0:
                i = (i + 1) & (T - 1)
            slot_key[i], slot_form[i] = np.uint64(h), f
        cols = [np.array(c, np.int64) for c in zip(*(f for _, f in items))] \
            if items else [np.zeros(0, np.int64)] * 6
        return cls(slot_key, slot_form, *cols)


@njit(cache=True, nogil=True)
def decode_lines(buf, K, slot_key, slot_form, op_f, runs_f, ia_f, ib_f, ii_f, inz_f,
                 output_op):
    """``(status, line, op, w, a, b, idx, nz, starts)`` of the K lines of ``buf``
    (uint8, each line ending in a newline), against the form table (:class:`FormTable`'s
    arrays).  ``status`` is OK, or why it stopped at line ``line``; the int64 (K,)
    fields are the instruction's op, the work slot written (its first run; -1 on an
    ``output_op`` line), the runs the form names for operands a and b, index, and
    nonzero (the printed 1-based nonzero less one), -1 where the form names none;
    ``starts[k]`` is line k's first byte."""
    op = np.empty(K, np.int64)
    w = np.empty(K, np.int64)
    a = np.empty(K, np.int64)
    b = np.empty(K, np.int64)
    idx = np.empty(K, np.int64)
    nz = np.empty(K, np.int64)
    starts = np.empty(K, np.int64)
    run = np.zeros(MAX_RUNS, np.int64)
    mask = slot_key.size - 1
    n = buf.size
    pos = 0
    for k in range(K):
        if pos >= n:
            return LINE_COUNT, k, op, w, a, b, idx, nz, starts
        starts[k] = pos
        h = np.uint64(_FNV_OFFSET)
        length = 0
        runs = 0
        value = 0
        in_run = False
        while True:
            if pos >= n:                                # no newline at the end
                return LINE_COUNT, k, op, w, a, b, idx, nz, starts
            c = buf[pos]
            pos += 1
            if 48 <= c <= 57:
                value = value * 10 + (c - 48) if in_run else c - 48
                in_run = True
                continue
            if in_run:
                if runs < MAX_RUNS:
                    run[runs] = value
                runs += 1
                in_run = False
            if c == 10:
                break
            h = (h ^ np.uint64(c)) * np.uint64(_FNV_PRIME)
            length += 1
        h = (h ^ (np.uint64(length) * np.uint64(_MIX))) * np.uint64(_FNV_PRIME)
        h ^= h >> np.uint64(29)
        i = np.int64(h & np.uint64(mask))
        f = -1
        while slot_form[i] >= 0:
            if slot_key[i] == h:
                f = slot_form[i]
                break
            i = (i + 1) & mask
        if f < 0:
            return UNKNOWN_FORM, k, op, w, a, b, idx, nz, starts
        if runs != runs_f[f]:
            return RUN_COUNT, k, op, w, a, b, idx, nz, starts
        op[k] = op_f[f]
        w[k] = -1 if op_f[f] == output_op or runs == 0 else run[0]
        a[k] = run[ia_f[f]] if ia_f[f] >= 0 else -1
        b[k] = run[ib_f[f]] if ib_f[f] >= 0 else -1
        idx[k] = run[ii_f[f]] if ii_f[f] >= 0 else -1
        nz[k] = run[inz_f[f]] - 1 if inz_f[f] >= 0 else -1
    if pos != n:
        return LINE_COUNT, K, op, w, a, b, idx, nz, starts
    return OK, K, op, w, a, b, idx, nz, starts
