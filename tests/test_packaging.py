"""The wheel's package list covers every package of the source tree."""

import pathlib

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11")
def test_every_package_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = set()
    for top, name in (("caspar_backend", "caspar_backend"), ("adapters", "caspar_backend.adapters"),
                      ("kernels", "caspar_backend.kernels")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((name,) + rel))
    assert found == listed
