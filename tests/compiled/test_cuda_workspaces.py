"""The GPU batch's workspaces (compiled/cuda/workspaces.DeviceWorkspaces), built on NumPy
(``xp=np``): inputs every instance shares (``batch_inputs``' stride-0 rows, sent once and
copied on the device) give the same arrays as the same values given row by row, in both
arrangements."""
import numpy as np
import pytest

from caspar_backend.batch.inputs import batch_inputs, shared_row


@pytest.mark.parametrize("interleaved", [False, True])
def test_shared_rows_give_the_arrays_of_their_copies(interleaved):
    pytest.importorskip("casadi")
    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from caspar_backend.compiled.cuda.group import group_layout
    from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces

    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    sub = batch_inputs(problem, None, p=arm_targets(5, seed=2))
    shared = [sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg]
    assert shared_row(sub.lbx) and shared_row(sub.x0) and not shared_row(sub.p)
    copied = [np.array(a) for a in shared]
    lay = group_layout(problem, sub.subset(np.arange(sub.size)))
    a, b = (DeviceWorkspaces(lay, *arrays, xp=np, interleaved=interleaved,
                             shared_structure=True) for arrays in (shared, copied))
    for name in ("Fall", "Ishared", "Iscratch", "X0", "LBX", "UBX", "LBG", "UBG"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and x.flags.c_contiguous and y.flags.c_contiguous
        np.testing.assert_array_equal(x, y)
