"""Every option of the solver's table is read by the code: an option the table accepts
and nothing reads would be silently ignored (least_square_init_duals, max_resto_iter and
derivative_test_print_all were, until session 41).  A source scan: each name must be read
(``.name`` or ``"name"``) in the package or the adapters outside the tables that only
list options (the table itself, the compiled path's and the batch's option rules)."""
import re
from pathlib import Path

from caspar_backend.solver.option_table import OPTIONS

ROOT = Path(__file__).resolve().parents[2]
#: files that list option names without acting on them
TABLES = {ROOT / "caspar_backend" / "solver" / "option_table.py",
          ROOT / "caspar_backend" / "compiled" / "options.py",
          ROOT / "caspar_backend" / "batch" / "solve.py"}


def test_every_option_is_read_somewhere():
    text = "".join(p.read_text() for d in ("caspar_backend", "adapters")
                   for p in (ROOT / d).rglob("*.py") if p not in TABLES)
    unread = [name for name in OPTIONS
              if not re.search(r"(\.%s\b|[\"']%s[\"'])" % (name, name), text)]
    assert not unread, f"options the code never reads: {unread}"
