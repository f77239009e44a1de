"""Do NumPy's float64 ufuncs (SIMD dispatch on this CPU) give the bits of libm's
(what Numba's math.* calls)?  Counts differing results over 10^6 random arguments."""
import math
import numpy as np
from numba import njit, vectorize

rng = np.random.default_rng(0)
x = np.concatenate([rng.uniform(-10, 10, 500000), 10 ** rng.uniform(-8, 8, 500000)])
xp = np.abs(x)
cases = {"exp": (np.exp, math.exp, x), "log": (np.log, math.log, xp), "sin": (np.sin, math.sin, x),
         "cos": (np.cos, math.cos, x), "tan": (np.tan, math.tan, x), "sqrt": (np.sqrt, math.sqrt, xp),
         "log10": (np.log10, math.log10, xp), "expm1": (np.expm1, math.expm1, x),
         "log1p": (np.log1p, math.log1p, xp), "tanh": (np.tanh, math.tanh, x),
         "atan": (np.arctan, math.atan, x), "pow(.,1.5)": (lambda a: np.power(a, 1.5), None, xp)}
for name, (npf, mf, a) in cases.items():
    if mf is None:
        nb = njit(lambda v: np.array([t ** 1.5 for t in v]))
        ref = npf(a); got = nb(a)
    else:
        f = njit(lambda v, mf=mf: np.array([mf(t) for t in v]))
        ref = npf(a); got = f(a)
    d = np.sum(ref != got)
    ulp = np.max(np.abs(ref - got) / np.spacing(np.abs(ref))) if d else 0
    print(f"{name:10s} numpy vs numba(libm): {d:7d} of {len(a)} differ (max {ulp:.0f} ulp)")
