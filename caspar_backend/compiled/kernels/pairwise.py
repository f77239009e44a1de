"""Scalar helpers with NumPy's semantics: NumPy's pairwise summation bit for bit,
NaN-propagating max/min, max |a_i|, all-finite.
"""
import math

import numpy as np

from ._jit import kernel


@kernel
def _pw0(a, s, n):
    """np.sum(a[s:s+n]) bit for bit: NumPy's pairwise summation (8 accumulators,
    blocks of 128), from 0."""
    if n < 8:
        r = 0.0
        for i in range(n):
            r += a[s + i]
        return r
    if n <= 128:
        r0 = a[s]
        r1 = a[s + 1]
        r2 = a[s + 2]
        r3 = a[s + 3]
        r4 = a[s + 4]
        r5 = a[s + 5]
        r6 = a[s + 6]
        r7 = a[s + 7]
        i = 8
        lim = n - n % 8
        while i < lim:
            r0 += a[s + i]
            r1 += a[s + i + 1]
            r2 += a[s + i + 2]
            r3 += a[s + i + 3]
            r4 += a[s + i + 4]
            r5 += a[s + i + 5]
            r6 += a[s + i + 6]
            r7 += a[s + i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[s + i]
            i += 1
        return res
    r = 0.0                       # beyond the levels below: a plain sum (not NumPy's)
    for i in range(n):
        r += a[s + i]
    return r


@kernel
def _pw1(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw0(a, s, n2) + _pw0(a, s + n2, n - n2)


@kernel
def _pw2(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw1(a, s, n2) + _pw1(a, s + n2, n - n2)


@kernel
def _pw3(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw2(a, s, n2) + _pw2(a, s + n2, n - n2)


@kernel
def _pw4(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw3(a, s, n2) + _pw3(a, s + n2, n - n2)


@kernel
def _pw5(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw4(a, s, n2) + _pw4(a, s + n2, n - n2)


@kernel
def _pw6(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw5(a, s, n2) + _pw5(a, s + n2, n - n2)


@kernel
def _pw7(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw6(a, s, n2) + _pw6(a, s + n2, n - n2)


@kernel
def _pw8(a, s, n):
    if n <= 128:
        return _pw0(a, s, n)
    n2 = n // 2
    n2 -= n2 % 8
    return _pw7(a, s, n2) + _pw7(a, s + n2, n - n2)


@kernel
def pairwise_sum(a, s, n):
    """np.sum(a[s:s+n]) bit for bit: NumPy's pairwise summation (8 accumulators, blocks
    of 128, halves above), from 0; unrolled levels (no recursion: Numba's cache and CUDA)
    exact up to 128 * 2^8 entries."""
    return _pw8(a, s, n)


@kernel
def nmax(a, b):
    """np.maximum: NaN propagates."""
    if a != a or b != b:
        return np.nan
    return a if a >= b else b


@kernel
def nmin(a, b):
    if a != a or b != b:
        return np.nan
    return a if a <= b else b


@kernel
def amax_abs(a, n):
    """np.max(np.abs(a[:n])) (NaN propagates); 0 for n == 0."""
    r = 0.0
    for i in range(n):
        v = abs(a[i])
        if v != v:
            return np.nan
        if i == 0 or v > r:
            r = v
    return r


@kernel
def isfinite_all(a, n):
    for i in range(n):
        if not math.isfinite(a[i]):
            return False
    return True
