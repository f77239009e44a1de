"""QDLDL's working vectors in a team's shared memory (caspar_backend/compiled/cuda/
accessors.py, launch.py): SHARED_FLOATS tile a team's S shared entries, one stretch each
of its slot's length, and the launch fits the teams of a block into the shared memory a
block may take.  The answers with the vectors in shared memory:
tests/compiled/test_cuda_simulated.py (the simulator; every case there has S > 0) and
tests/compiled/test_cuda_batch.py (the GPU)."""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")

from caspar_backend.compiled.cuda import accessors, launch  # noqa: E402
from caspar_backend.compiled.kernels import slots  # noqa: E402


def _offsets(sizes):
    """FO for float slots 0 .. len(sizes) - 1 of the given sizes."""
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def test_every_working_vector_is_a_qdldl_float_slot_read_through_fv():
    import inspect

    from caspar_backend.compiled.kernels import ldl_parts, qdldl

    src = inspect.getsource(qdldl) + inspect.getsource(ldl_parts)
    for k in accessors.SHARED_FLOATS:
        name = next(n for n, v in vars(slots).items() if n.startswith("F_") and v == k)
        assert f"_fv(Fb, FO, Ib, IO, {name})" in src, name
        assert f"_f(Fb, FO, {name})" not in src, name


@pytest.mark.parametrize("n", (0, 1, 7))
def test_working_vectors_tile_the_team_entries(n):
    rng = np.random.default_rng(n)
    sizes = rng.integers(1, 5, len(slots.FLOAT_SLOTS))
    for j, k in enumerate(accessors.SHARED_FLOATS):
        sizes[k] = n + j            # distinct lengths: a wrong offset shows
    FO = _offsets(sizes)
    S = accessors.shared_floats(FO)
    assert S == sum(n + j for j in range(len(accessors.SHARED_FLOATS)))
    covered = np.zeros(S, int)
    for k in accessors.SHARED_FLOATS:
        o = accessors.shared_offset(FO, k)
        assert 0 <= o and o + sizes[k] <= S, k
        covered[o:o + sizes[k]] += 1
    assert (covered == 1).all()     # disjoint, and nothing left over


def test_launch_fits_teams_into_a_blocks_shared_memory():
    sizes = np.ones(len(slots.FLOAT_SLOTS), np.int64)
    for k in accessors.SHARED_FLOATS:
        sizes[k] = 854                               # Van der Pol N = 50: K of 854 rows
    FO = _offsets(sizes)
    S = accessors.shared_floats(FO)
    assert launch.shared_layout(FO, 1) == (1, S)
    assert launch.shared_layout(FO, 4) == (launch.SHARED_BYTES // (8 * S), S)
    assert launch.shared_layout(FO, 4, shared=False) == (4, 0)
    for k in accessors.SHARED_FLOATS:
        sizes[k] = launch.SHARED_BYTES // 8          # one team's would not fit
    assert launch.shared_layout(_offsets(sizes), 3) == (3, 0)
