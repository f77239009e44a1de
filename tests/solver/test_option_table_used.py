"""Every option of the solver's table is read by the code: an option the table accepts
and nothing reads would be silently ignored (least_square_init_duals, max_resto_iter and
derivative_test_print_all were, until session 41).  A source scan: each name must occur
in the package or the adapters outside the table itself."""
from pathlib import Path

from caspar_backend.solver.option_table import OPTIONS

ROOT = Path(__file__).resolve().parents[2]


def test_every_option_is_read_somewhere():
    text = "".join(p.read_text() for d in ("caspar_backend", "adapters")
                   for p in (ROOT / d).rglob("*.py") if p.name != "option_table.py")
    unread = [name for name in OPTIONS if name not in text]
    assert not unread, f"options the code never reads: {unread}"
