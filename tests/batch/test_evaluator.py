"""BatchEvaluator: every instance's outputs equal the single evaluator's with that
instance's parameters, in the single problem's COO orders."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.batch.evaluator import BatchEvaluator
from caspar_backend.errors import ModelError
from tests.batch import problems
from tests.support.assertions import close

pytest.importorskip("casadi")

#: the same formulas on the same operands; only the objective's sum over its terms runs
#: in another order (module doc of caspar_backend.batch.evaluator)
RTOL = 1e-14


def _outputs(be, X, Y, of):
    """(f, g, grad, jac, hess) of the batch evaluator, into arrays it did not make."""
    B, xp = be.batch_size, be.xp
    out = (xp.full(B, np.nan), xp.full((B, be.m), np.nan), xp.full((B, be.n), np.nan),
           xp.full((B, len(be.jac_rows)), np.nan), xp.full((B, len(be.hess_rows)), np.nan))
    be.zeroth(X, out[0], out[1])
    be.first(X, out[2], out[3])
    be.hess(X, Y, of, out[4])
    return out


def _inputs(prob, sample, B, seed):
    rng = np.random.default_rng(seed)
    X, P = sample(rng, B)
    return X, P, rng.standard_normal((B, prob.m)), rng.uniform(0.1, 3.0, B)


#: (B, chunk_size): one chunk (the default for these small problems), chunks of 4 and a
#: remainder of 1 (bound evaluators and a second replica), chunks of one instance
SIZES = [(1, None), (3, None), (17, None), (17, 4), (5, 1)]


@pytest.mark.parametrize("B, chunk", SIZES)
@pytest.mark.parametrize("name", problems.ALL_NAMES)
def test_every_instance_equals_its_single_evaluation(name, B, chunk):
    prob, sample = problems.build(name)
    X, P, Y, of = _inputs(prob, sample, B, seed=B)
    be = BatchEvaluator(prob, B, chunk_size=chunk)
    assert be.chunk_size == (B if chunk is None else chunk)
    be.set_params(P)
    single = prob.evaluator("cpu")
    np.testing.assert_array_equal(be.jac_rows, single.jac_rows)
    np.testing.assert_array_equal(be.jac_cols, single.jac_cols)
    np.testing.assert_array_equal(be.hess_rows, single.hess_rows)
    np.testing.assert_array_equal(be.hess_cols, single.hess_cols)
    f, g, grad, jac, hess = _outputs(be, X, Y, of)
    for b in range(B):
        ev = prob.evaluator("cpu", p=P[b])
        msg = f"{name} instance {b}"
        close(f[b], ev.obj(X[b]), RTOL, msg=msg)
        close(g[b], ev.cons(X[b]), RTOL, msg=msg)
        close(grad[b], ev.grad(X[b]), RTOL, msg=msg)
        close(jac[b], ev.jac_values(X[b]), RTOL, msg=msg)
        close(hess[b], ev.hess_values(X[b], Y[b], of[b]), RTOL, msg=msg)


@pytest.mark.parametrize("chunk", [None, 2])
def test_outputs_other_than_f_are_bitwise_equal(chunk):
    """Away from the objective's term sum, nothing is summed in another order: the
    split rows, duplicate Jacobian pairs and the gradient keep the single order."""
    prob, sample = problems.build("wide")
    X, P, Y, of = _inputs(prob, sample, 5, seed=0)
    be = BatchEvaluator(prob, 5, chunk_size=chunk)
    be.set_params(P)
    _, g, grad, jac, hess = _outputs(be, X, Y, of)
    for b in range(5):
        ev = prob.evaluator("cpu", p=P[b])
        np.testing.assert_array_equal(g[b], ev.cons(X[b]))
        np.testing.assert_array_equal(grad[b], ev.grad(X[b]))
        np.testing.assert_array_equal(jac[b], ev.jac_values(X[b]))
        np.testing.assert_array_equal(hess[b], ev.hess_values(X[b], Y[b], of[b]))


def test_scalar_objective_factor_and_shared_parameters():
    prob, sample = problems.build("ik")
    X, _, Y, _ = _inputs(prob, sample, 4, seed=1)
    be = BatchEvaluator(prob, 4, chunk_size=3)
    be.set_params([0.3, -1.2])  # one row for every instance
    np.testing.assert_array_equal(be.parameters(), np.tile([0.3, -1.2], (4, 1)))
    _, _, _, _, hess = _outputs(be, X, Y, 0.0)
    ev = prob.evaluator("cpu", p=[0.3, -1.2])
    for b in range(4):
        close(hess[b], ev.hess_values(X[b], Y[b], 0.0), RTOL)


def test_parameters_default_to_the_problems_current_values():
    prob, sample = problems.build("ik")
    X, _, Y, of = _inputs(prob, sample, 2, seed=2)
    be = BatchEvaluator(prob, 2)
    out = _outputs(be, X, Y, of)
    ev = prob.evaluator("cpu")
    for b in range(2):
        close(out[0][b], ev.obj(X[b]), RTOL)


def test_bad_shapes_are_model_errors():
    prob, _ = problems.build("ik")
    be = BatchEvaluator(prob, 3)
    with pytest.raises(ModelError, match="batch parameters"):
        be.set_params(np.zeros((2, 2)))
    with pytest.raises(ModelError, match="X has shape"):
        be.zeroth(np.zeros((2, 3)), np.zeros(2), np.zeros((2, 1)))
    with pytest.raises(ModelError, match="batch size must be at least 1"):
        BatchEvaluator(prob, 0)
    with pytest.raises(ModelError, match="chunk size must be at least 1"):
        BatchEvaluator(prob, 3, chunk_size=-2)


def test_default_chunk_bounds_the_widest_group():
    from caspar_backend.batch.evaluator import CPU_CHUNK_ENTRIES, default_chunk

    prob, _ = problems.build("optimal_control_200")
    widest = max(g.size for g in prob.objective_groups + prob.constraint_groups)
    C = default_chunk(prob)
    assert C * widest <= CPU_CHUNK_ENTRIES < (C + 1) * widest
    assert BatchEvaluator(prob, 3 * C + 1).chunk_size == C


def test_describe_nonfinite_names_the_single_problems_row():
    prob, _ = problems.build("undefined_outside_log_barrier")
    be = BatchEvaluator(prob, 2)
    x = -np.ones(prob.n)  # outside the log's domain
    assert be.describe_nonfinite(x, 1) == prob.evaluator("cpu").describe_nonfinite(x)
    assert "no non-finite" not in be.describe_nonfinite(x, 1)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["ik", "wide", "mx_map", "hs071", "constant_objective",
                                  "pyomo_params", "chained_rosenbrock_10"])
def test_cuda_matches_cpu(name):
    import cupy as cp

    prob, sample = problems.build(name)
    B = 33
    X, P, Y, of = _inputs(prob, sample, B, seed=3)
    cpu, gpu = BatchEvaluator(prob, B), BatchEvaluator(prob, B, device="cuda")
    assert gpu.xp is cp and gpu.device == "cuda"
    cpu.set_params(P)
    gpu.set_params(cp.asarray(P))
    want = _outputs(cpu, X, Y, of)
    got = _outputs(gpu, cp.asarray(X), cp.asarray(Y), cp.asarray(of))
    for a, b in zip(got, want):
        close(cp.asnumpy(a), b, 1e-12)
