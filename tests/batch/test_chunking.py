"""What a batch cut into chunks rests on (caspar_backend/batch/distributed.py):

* an instance's result does not depend on which other instances share its batch: any
  consecutive run of a batch, solved as a batch of its own, gives those instances'
  results bit for bit -- also across the CPU's compaction (>= 256 rows dropped at
  once) and the evaluator's CPU chunks, and for instances that leave the batch;
* a Problem pickles without its compiled caches (or a Pyomo model's components), and
  the unpickled copy solves a batch to the same bits;
* ``chunk_rows`` sends a shared input once and the chunk's rows of the others.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from caspar_backend.batch.chunk import chunk_rows
from caspar_backend.batch.inputs import batch_inputs
from tests.batch.problems import build, perturbed_bank
from tests.batch.same import assert_identical

X0_IK = [0.1, 0.2, 0.3]


@pytest.fixture(scope="module")
def ik():
    return build("ik")[0]


def _ik_inputs(B, seed=0):
    from benchmarks.bench_small import ik_targets

    T = ik_targets(B, seed=seed)
    ubg = np.full((B, 1), 2.5)
    ubg[7::97] = -10.0           # q1 + q2 + q3 <= -10 with q_i >= -pi: infeasible
    return dict(x0=X0_IK, p=T, ubg=ubg)


def test_ik_runs_of_a_batch_solve_to_the_batchs_bits(ik):
    # 1200 instances: the whole batch compacts (>= 256 rows drop at once), 300 do not;
    # the infeasible instances leave the batch for their single solves
    inp = _ik_inputs(1200)
    whole = ik.solve_batch(**inp, print_level=0)
    assert set(whole.path) == {"lockstep", "single"}
    assert whole.status.count("Infeasible_Problem_Detected") == 13
    for a, b in ((0, 600), (600, 1200), (250, 550), (7, 8), (1199, 1200)):
        part = ik.solve_batch(x0=X0_IK, p=inp["p"][a:b], ubg=inp["ubg"][a:b],
                              print_level=0)
        assert_identical(part, whole, slice(a, b))


@pytest.mark.parametrize("name", ["hs071", "hs076", "chained_rosenbrock_10", "hs027",
                                  "needs_restoration_circle", "infeasible_disc_halfplane"])
def test_bank_runs_of_a_batch_solve_to_the_batchs_bits(name):
    # hs027: some instances leave the batch; the last two: all of them (restoration)
    problem, inp, opts = perturbed_bank(name, 6, seed=len(name))
    whole = problem.solve_batch(**inp, **opts)
    for a, b in ((0, 3), (3, 6), (1, 2), (2, 6)):
        part = problem.solve_batch(**dict(inp, x0=inp["x0"][a:b]), **opts)
        assert_identical(part, whole, slice(a, b))


@pytest.mark.parametrize("name", ["ik", "pyomo_params", "mx_map", "optimal_control_200"])
def test_a_pickled_problem_solves_to_the_same_bits(name):
    problem, sample = build(name)
    X, P = sample(np.random.default_rng(1), 5)
    ref = problem.solve_batch(x0=X, p=P, print_level=0)     # compiles the evaluators
    problem.parameter_derivatives(X[0], np.zeros(problem.m), P[0])
    copy = pickle.loads(pickle.dumps(problem))
    # the caches stay behind; the front end's objects too
    assert copy._evaluators == {} and copy._augmented is None and copy.model.meta == {}
    assert list(copy.var_names) == list(problem.var_names)
    assert_identical(copy.solve_batch(x0=X, p=P, print_level=0), ref)


def test_pyomo_names_pickle_as_plain_lists():
    problem = build("pyomo_params")[0]
    copy = pickle.loads(pickle.dumps(problem))
    assert type(copy.var_names) is list and copy.var_names[0] == "x[1]"
    assert copy.param_names == [f"q[{i}]" for i in range(1, 6)]


def test_chunk_rows_send_shared_inputs_once(ik):
    P = np.arange(20.0).reshape(10, 2)
    inp = batch_inputs(ik, x0=X0_IK, p=P, ubg=np.full((10, 1), 2.0))
    rows = chunk_rows(inp, 4, 7)
    np.testing.assert_array_equal(rows["p"], P[4:7])
    assert rows["p"].flags.c_contiguous and rows["ubg"].shape == (3, 1)
    np.testing.assert_array_equal(rows["x0"], X0_IK)          # shared: one vector
    np.testing.assert_array_equal(rows["lbx"], ik.lbx)
    assert rows["lam_g0"] is None and rows["lam_x0"] is None
    part = ik.solve_batch(batch_size=3, **rows, print_level=0)
    whole = ik.solve_batch(x0=X0_IK, p=P, ubg=np.full((10, 1), 2.0), print_level=0)
    assert_identical(part, whole, slice(4, 7))
