"""Micro-experiment: cost of passing a tuple of K arrays to a non-inlined njit helper
(Numba flattens each array into ~7 scalar arguments) -- call overhead and compile time."""
import time
import numpy as np
from numba import njit

K = 30
def make(kind):
    src = ["from numba import njit"]
    for j in range(20):
        if kind == "tuple":
            src.append(f"@njit(_nrt=False)\ndef h{j}(T, i):\n    a = T[{j % K}]\n    a[i % a.shape[0]] += 1.0\n")
        else:
            src.append(f"@njit(_nrt=False)\ndef h{j}(F, O, i):\n    a = F[O[{j % K}]:O[{j % K}+1]]\n    a[i % a.shape[0]] += 1.0\n")
    args = "T" if kind == "tuple" else "F, O"
    body = "\n".join(f"        h{j}({args}, i)" for j in range(20))
    src.append(f"@njit(_nrt=False)\ndef drive({args}, n):\n    for i in range(n):\n{body}\n")
    ns = {}
    exec("\n".join(src), ns)
    return ns["drive"]

arrs = tuple(np.zeros(8) for _ in range(K))
F = np.zeros(8 * K); O = np.arange(0, 8 * K + 1, 8)
for kind, args in (("tuple", (arrs,)), ("flat", (F, O))):
    d = make(kind)
    c0 = time.process_time(); d(*args, 1); c1 = time.process_time()
    t0 = time.perf_counter(); d(*args, 100000); t1 = time.perf_counter()
    print(f"{kind:6s}: compile of 21 functions {c1 - c0:.1f} s CPU; "
          f"{(t1 - t0) / 100000 / 20 * 1e9:.1f} ns per helper call")
