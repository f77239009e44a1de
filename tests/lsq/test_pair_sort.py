"""The linear-time pair sorts of the least-squares structures against NumPy's sorts."""

import numpy as np
import pytest

from caspar_backend.lsq.jacobian import csr_order, unique_pairs
from caspar_backend.lsq.pair_sort import distinct_pairs, pair_order


@pytest.mark.parametrize("seed,m,k,nnz", [(0, 50, 30, 400), (1, 7, 1000, 3000), (2, 1, 1, 5),
                                          (3, 100, 5, 0), (4, 2000, 3, 900)])
def test_pair_order_is_a_stable_lexicographic_sort(seed, m, k, nnz):
    rng = np.random.default_rng(seed)
    rows, keys = rng.integers(0, m, nnz), rng.integers(0, k, nnz)
    order, indptr = pair_order(rows, keys, m, k)
    np.testing.assert_array_equal(order, np.lexsort((np.arange(nnz), keys, rows)))
    np.testing.assert_array_equal(indptr, np.r_[0, np.cumsum(np.bincount(rows, minlength=m))])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distinct_pairs_match_numpy_unique(seed):
    rng = np.random.default_rng(seed)
    m, k = 60, 8
    rows, keys = rng.integers(0, m, 700), rng.integers(0, k, 700)    # many repeats
    indptr, ukeys, pos = distinct_pairs(rows, keys, m, k)
    flat, inv = np.unique(rows * k + keys, return_inverse=True)
    np.testing.assert_array_equal(ukeys, flat % k)
    np.testing.assert_array_equal(pos, inv.reshape(-1))
    np.testing.assert_array_equal(indptr, np.r_[0, np.cumsum(np.bincount(flat // k,
                                                                         minlength=m))])
    assert unique_pairs(rows, keys, m, k)[1].tolist() == ukeys.tolist()


def test_csr_order_gives_scipys_csr():
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    flat = rng.choice(40 * 25, 300, replace=False)
    rows, cols = flat // 25, flat % 25
    order, indptr, indices = csr_order(rows, cols, 40, 25)
    A = sp.csr_matrix((np.arange(1.0, 301.0), (rows, cols)), shape=(40, 25))
    A.sort_indices()
    np.testing.assert_array_equal(indptr, A.indptr)
    np.testing.assert_array_equal(indices, A.indices)
    np.testing.assert_array_equal(order, A.data.astype(int) - 1)
