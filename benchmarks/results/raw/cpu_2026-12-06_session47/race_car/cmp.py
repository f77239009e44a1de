"""compare dumps: python cmp.py ref.npz other.npz -> per-iteration max|dx| for first 8 iterations"""
import sys, numpy as np
a=np.load(sys.argv[1]); b=np.load(sys.argv[2])
n=min(len(a['x']),len(b['x']),8)
print(" ".join(f"{k}:{np.abs(a['x'][k]-b['x'][k]).max():.1e}" for k in range(n)))
