"""The linear-time pair sorts of the least-squares structures against NumPy's sorts."""

import numpy as np
import pytest

from caspar_backend.lsq.jacobian import csr_order
from caspar_backend.lsq.pair_sort import columns_missing_rows, pair_order, row_labels


@pytest.mark.parametrize("seed,m,k,nnz", [(0, 50, 30, 400), (1, 7, 1000, 3000), (2, 1, 1, 5),
                                          (3, 100, 5, 0), (4, 2000, 3, 900)])
def test_pair_order_is_a_stable_lexicographic_sort(seed, m, k, nnz):
    rng = np.random.default_rng(seed)
    rows, keys = rng.integers(0, m, nnz), rng.integers(0, k, nnz)
    order, indptr = pair_order(rows, keys, m, k)
    np.testing.assert_array_equal(order, np.lexsort((np.arange(nnz), keys, rows)))
    np.testing.assert_array_equal(indptr, np.r_[0, np.cumsum(np.bincount(rows, minlength=m))])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_row_labels_match_numpy_unique(seed):
    rng = np.random.default_rng(seed)
    m, n, k = 60, 40, 8
    flat = rng.choice(m * n, 700, replace=False)
    rows, cols = flat // n, flat % n
    label = rng.integers(-1, k, n)                  # -1: unlabelled columns
    order, indptr, indices = csr_order(rows, cols, m, n)
    out_indptr, labels, pos = row_labels(indptr, indices, label)
    lab = label[cols[order]]
    r = rows[order]
    has = lab >= 0
    pairs, inv = np.unique(r[has] * k + lab[has], return_inverse=True)
    np.testing.assert_array_equal(labels, pairs % k)
    np.testing.assert_array_equal(out_indptr, np.r_[0, np.cumsum(np.bincount(pairs // k,
                                                                             minlength=m))])
    np.testing.assert_array_equal(pos[has], inv.reshape(-1))
    assert np.all(pos[~has] == -1)


def test_columns_missing_rows():
    # columns 0 and 1: rows {0, 1}; column 2: rows {0, 2}
    rows, cols = np.array([0, 1, 0, 1, 0, 2]), np.array([0, 0, 1, 1, 2, 2])
    order, indptr, indices = csr_order(rows, cols, 3, 3)
    bad = columns_missing_rows(indptr, indices, rows, cols, np.array([0, 0, 0]), 3)
    assert bad.tolist() == [False, False, True]


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


@pytest.mark.parametrize("seed", [0, 1])
def test_label_adjacency_is_the_set_of_labels_sharing_a_row(seed):
    from caspar_backend.lsq.jacobian import segment_pairs
    from caspar_backend.lsq.pair_sort import label_adjacency

    rng = np.random.default_rng(seed)
    m, n, nb = 50, 30, 12
    flat = rng.choice(m * n, 300, replace=False)
    rows, cols = flat // n, flat % n
    _, indptr, indices = csr_order(rows, cols, m, n)
    ip, labels, _ = row_labels(indptr, indices, rng.integers(0, nb, n))
    adj_ptr, adj = label_adjacency(ip, labels, nb)
    inc_row = np.repeat(np.arange(m), np.diff(ip))
    a, b = segment_pairs(inc_row)
    off = a != b
    ba, bb = labels[a[off]], labels[b[off]]
    want = np.unique(np.r_[ba * nb + bb, bb * nb + ba])
    got = np.repeat(np.arange(nb), np.diff(adj_ptr)) * nb + adj
    assert len(got) == len(np.unique(got))            # each neighbour once
    np.testing.assert_array_equal(np.sort(got), want)
