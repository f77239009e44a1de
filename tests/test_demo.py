"""``caspar demo`` runs and its objective matches IPOPT's (small N, CPU)."""

import pytest

pytest.importorskip("casadi")


def test_demo_matches_ipopt():
    from caspar_backend.demo import run

    lines = []
    assert run(N=100, tol=1e-8, out=lines.append) == 0
    text = "\n".join(lines)
    assert "objectives match" in text and "Solve_Succeeded" in text
    assert "device: cpu" in text


def test_console_entry_point():
    from caspar_backend.__main__ import main

    with pytest.raises(SystemExit):
        main(["--help"])
