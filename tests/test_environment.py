"""caspar_backend/environment.py's table of environment variables is complete: every
variable the sources read is in it, with the module that reads it, and README's
"Environment variables" table lists exactly its names."""
import re
from pathlib import Path

from caspar_backend.environment import VARIABLES

ROOT = Path(__file__).resolve().parents[1]
#: a read of a named variable: os.environ.get("X" ...), os.environ["X"], os.getenv("X")
READ = re.compile(r"""(?:environ\.get|environ\[|getenv)\(?\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""")


def _reads() -> dict:
    out = {}
    for folder in ("caspar_backend", "adapters"):
        for p in (ROOT / folder).rglob("*.py"):
            for name in READ.findall(p.read_text()):
                out.setdefault(name, set()).add(str(p.relative_to(ROOT)))
    return out


def test_every_variable_read_is_in_the_table_with_its_modules():
    table = {v.name: set(v.where) for v in VARIABLES}
    reads = _reads()
    assert set(reads) == set(table), (set(reads) ^ set(table))
    for name, where in reads.items():
        assert where == table[name], (name, where)


def test_readme_lists_the_table():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \|", section, re.M)
    assert listed == [v.name for v in VARIABLES]
