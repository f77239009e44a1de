"""``caspar demo`` runs and its objective matches IPOPT's (small N, CPU)."""

import pytest

pytest.importorskip("casadi")


def test_demo_matches_ipopt():
    from caspar_backend.adapters.casadi.demo import run

    lines = []
    assert run(N=100, tol=1e-8, out=lines.append, batch=50) == 0
    text = "\n".join(lines)
    assert "objectives match" in text and "Solve_Succeeded" in text
    assert "device: cpu" in text
    assert "statuses equal 50/50" in text and "one solve_batch call" in text


def test_console_entry_point():
    from caspar_backend.__main__ import main

    with pytest.raises(SystemExit):
        main(["--help"])


def test_demo_is_not_in_the_core():
    """``import caspar_backend`` and its command line import neither casadi nor the demo."""
    import subprocess
    import sys

    code = ("import sys, caspar_backend, caspar_backend.__main__; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('casadi', 'pyomo') "
            "or m.startswith('caspar_backend.adapters')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip()
    assert out == "[]"
