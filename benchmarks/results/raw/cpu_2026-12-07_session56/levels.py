"""Level scheduling of QDLDL's chains on Van der Pol's K (the pickled layout of
make_vdp_pickle.py, session 54's next_lease): per substitution and for the elimination, the
work on the longest path when each level's rows run at once (unlimited lanes) against the
serial row order.  argv: the pickle (default .stage/x/vdp_new.pkl.xz)."""
import lzma
import os
import pickle
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
from caspar_backend.compiled.kernels import slots  # noqa: E402

path = sys.argv[1] if len(sys.argv) > 1 else ".stage/x/vdp_new.pkl.xz"
lay = pickle.loads(lzma.decompress(open(path, "rb").read()))["lay"]


def I(name):
    k = slots.INT_SLOTS.index(name)
    return lay.Ib[lay.IO[k]:lay.IO[k + 1]]


Lp, Li = I("L_INDPTR"), I("L_INDICES")
Rp, Rc = I("L_ROW_PTR"), I("L_ROW_COL")
n = len(Lp) - 1
print("n", n, "nnzL", len(Li))
# forward: row i waits on the columns of its row of L
lev = np.zeros(n, int)
for i in range(n):
    c = Rc[Rp[i]:Rp[i + 1]]
    lev[i] = 1 + (lev[c].max() if len(c) else -1)
nl = lev.max() + 1
work = np.diff(Rp) + 1
par = sum(work[lev == q].max() for q in range(nl))
print("forward levels", nl, "serial work", work.sum(), "leveled (inf lanes)", par,
      "ratio", work.sum() / par)
cnt = np.bincount(lev)
print(" rows/level max", cnt.max(), "hist", np.bincount(cnt)[:10])
# backward: row i waits on the rows of its column of L
levb = np.zeros(n, int)
for i in range(n - 1, -1, -1):
    r = Li[Lp[i]:Lp[i + 1]]
    levb[i] = 1 + (levb[r].max() if len(r) else -1)
nb = levb.max() + 1
workb = np.diff(Lp) + 1
print("backward levels", nb, "serial", workb.sum(), "leveled",
      sum(workb[levb == q].max() for q in range(nb)))
# elimination: row k's updates (LDL_ROW_*) and their inner loops
P2, C2, T2 = I("LDL_ROW_PTR"), I("LDL_ROW_COL"), I("LDL_ROW_POS")
inner = np.array([T2[q] - Lp[C2[q]] for q in range(len(C2))])
roww = np.array([(P2[k + 1] - P2[k]) + inner[P2[k]:P2[k + 1]].sum() + 1 for k in range(n)])
print("elim: updates", len(C2), "inner total", inner.sum(), "serial", roww.sum(), "leveled",
      sum(roww[lev == q].max() for q in range(nl)))
