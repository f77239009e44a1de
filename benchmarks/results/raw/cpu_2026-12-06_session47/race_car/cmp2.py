"""python cmp2.py ref.npz a.npz b.npz ...: per-iteration max|dx| vs ref (iterations 0..K), plus total iterations"""
import sys, numpy as np
r = np.load(sys.argv[1])['x']
for f in sys.argv[2:]:
    x = np.load(f)['x']; n = min(len(r), len(x), 16)
    print(f"{f:14s} it={len(x)-2:3d} " + " ".join(f"{np.abs(r[k]-x[k]).max():.0e}" for k in range(3, n)))
