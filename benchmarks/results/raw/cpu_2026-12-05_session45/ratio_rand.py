import numpy as np, scipy.sparse as sp, sys
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import bk_instr
from caspar_backend.linsolve.base import SparseStructure
rng = np.random.default_rng(0)
sing, reg = [], []
for trial in range(300):
    nw = rng.integers(1, 30); m = rng.integers(0, nw + 1)
    H = rng.standard_normal((nw, nw)) * (rng.random((nw, nw)) < 0.3); H = H + H.T + np.diag(rng.standard_normal(nw) * (rng.random() < 0.5))
    J = rng.standard_normal((m, nw)) * (rng.random((m, nw)) < 0.4)
    if m > 1 and rng.random() < 0.3: J[-1] = J[0] * 2.0
    K = np.block([[H, J.T], [J, np.zeros((m, m))]]) if m else H
    N = K.shape[0]
    Kp = sp.csc_matrix(K) + sp.eye(N) * 0; Kp = sp.triu(Kp).tocsc(); Kp.sort_indices()
    # full pattern incl. diagonal
    pat = sp.triu(sp.csc_matrix(np.ones((N, N)))).tocsc(); pat.sort_indices()
    vals = np.asarray(sp.triu(sp.csc_matrix(K)).toarray()[pat.nonzero()[0], pat.nonzero()[1]]).ravel()
    rows, cols = pat.nonzero()
    order = np.lexsort((rows, cols)); rows, cols = rows[order], cols[order]
    vals = np.triu(K)[rows, cols]
    st = SparseStructure(N, pat.indptr.astype(np.int64), rows.astype(np.int64))
    hb = bk_instr.HostBunchKaufman(st)
    bk_instr.RATIOS.clear(); r = hb.factorize(vals)
    ev = np.linalg.eigvalsh(K); s = np.sort(abs(ev))[0] / abs(ev).max()
    mr = min(bk_instr.RATIOS) if bk_instr.RATIOS else 1
    (sing if s < 1e-14 else reg).append(mr)
s=np.sort(sing); print('singular mid', s[(s>1e-20)&(s<1e-2)], np.sum(s<1e-15), np.sum(s<1e-13), np.sum(s<1e-11), len(s))
print('regular K:  min ratio quantiles', np.quantile(reg, [0, .1, .5]), len(reg))
