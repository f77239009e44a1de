"""``caspar warmup``'s least-squares part: its small solve goes through DENSE_SCHUR's
compiled elimination and the compiled structure passes (it raises otherwise)."""

import caspar_backend.lsq.pair_sort as pair_sort
import caspar_backend.lsq.schur_dense as schur_dense
from caspar_backend.lsq.warmup import compiled_loops


def test_warmup_compiles_every_least_squares_loop():
    assert compiled_loops() > 0
    loops = [pair_sort._pair_order, pair_sort._row_labels, pair_sort._rows_hold,
             pair_sort._adjacency, schur_dense.eliminate, schur_dense.back_substitute]
    assert all(f.signatures for f in loops)
