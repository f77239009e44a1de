"""``max_resto_iter`` (IPOPT's RestoConvergenceCheck): a restoration phase that has taken
more than that many iterations ends the solve with Maximum_Iterations_Exceeded.  Against
IPOPT 3.14 (casadi's nlpsol): status and iterations on the bank's restoration problems
for several limits (the count runs on across a solve's phases, as IPOPT's does), on the
general path and through the compiled path (which hands the restoration phase to it)."""
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

BANK = {b.name: b for b in bank(include_slow=False)}


@pytest.mark.parametrize("name", ["needs_restoration_circle", "needs_restoration_exp",
                                  "infeasible_disc_halfplane",
                                  "restoration_to_local_infeasibility_wb"])
@pytest.mark.parametrize("limit", [0, 1, 2, 5])
def test_max_resto_iter_as_ipopt(name, limit):
    bp = BANK[name]
    d = bp.build()
    nlp = _nlp(d)
    opts = {k: ("yes" if v is True else "no" if v is False else v)
            for k, v in dict(bp.options).items()}
    S = ca.nlpsol("S", "ipopt", nlp, {"print_time": False, "ipopt": dict(
        opts, print_level=0, sb="yes", max_resto_iter=limit)})
    S(**{k: d[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg")})
    st = S.stats()
    P = from_casadi(nlp)
    for mode in ("no", "yes"):
        r = P.solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"], ubg=d["ubg"],
                    print_level=0, max_resto_iter=limit, compiled_path=mode,
                    **dict(bp.options))
        assert (r.status, r.iterations) == (st["return_status"], st["iter_count"]), mode
        if r.status == "Maximum_Iterations_Exceeded" and limit == 0:
            assert "max_resto_iter" in r.message or r.iterations >= 3000
