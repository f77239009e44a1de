"""The module graph of caspar_backend has no cycles, and no module is long.

Graph: one node per module of ``caspar_backend/`` and of the folders installed under it
(``adapters/`` as ``caspar_backend.adapters``, ``kernels/`` as ``caspar_backend.kernels``);
an edge ``a -> b`` for every ``import`` / ``from ... import`` statement of ``a`` that names
``b``, at module level or inside a function (a lazy import is still a dependency: it only
moves the import's time).  Relative imports are resolved; ``from pkg import name`` names
the submodule ``pkg.name`` when there is one, else the package ``pkg`` (its
``__init__.py``).  Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``; those
implicit parent edges are left out (each package's ``__init__`` is a node of its own, with
the edges its own statements give).  Imports under ``if TYPE_CHECKING:`` are left out
too: they never run, so they order no imports (annotations only).  A cycle is a strongly connected component of more
than one module, or a module importing itself.

Rule: modules of one concept each, split past 500 lines (the design's layout); the test
counts lines of every ``.py`` file of the installed package: ``caspar_backend/``,
``adapters/`` and ``kernels/``.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = "caspar_backend"
#: source folder -> the dotted name it is installed as (pyproject.toml's package-dir)
FOLDERS = {"caspar_backend": PACKAGE, "adapters": f"{PACKAGE}.adapters",
           "kernels": f"{PACKAGE}.kernels"}
MAX_LINES = 500


def module_files() -> dict[str, pathlib.Path]:
    """``{dotted module name: file}`` for every ``.py`` file of :data:`FOLDERS`."""
    out = {}
    for folder, dotted in FOLDERS.items():
        for f in sorted((ROOT / folder).rglob("*.py")):
            parts = list(f.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([dotted, *parts])] = f
    return out


def _is_package(name: str, files: dict[str, pathlib.Path]) -> bool:
    return name in files and files[name].name == "__init__.py"


def _targets(node: ast.AST, module: str, files: dict) -> list[str]:
    """The caspar_backend modules one import statement of ``module`` names."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        if node.level:
            # the package the statement is relative to: the module's own package for a
            # package __init__, else the module's parent; one level up per extra dot
            base = module.split(".")
            if not _is_package(module, files):
                base = base[:-1]
            base = base[:len(base) - (node.level - 1)]
            stem = ".".join(base + ([node.module] if node.module else []))
        else:
            stem = node.module or ""
        names = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in files else stem
                 for a in node.names]
    out = []
    for name in names:
        # `import a.b.c` where only a.b is ours (c a function, say): the longest known prefix
        while name and name not in files:
            name = name.rpartition(".")[0]
        if name.startswith(PACKAGE) and name != module:
            out.append(name)
        elif name == module:
            out.append(name)  # a self-import is a cycle of one
    return out


def _type_checking(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    t = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING")
        or (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST):
    """Every import statement of ``tree``, at any depth, outside ``if TYPE_CHECKING:``
    bodies (their ``else:`` branch is walked)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif _type_checking(node):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` over :func:`module_files`."""
    files = module_files()
    graph = {}
    for mod, f in files.items():
        tree = ast.parse(f.read_text(), filename=str(f))
        graph[mod] = {t for node in _imports(tree) for t in _targets(node, mod, files)}
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    comps.append(sorted(comp))
    return comps


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """One line per cycle: the component's modules and the edges inside it."""
    out = []
    for comp in strongly_connected(graph):
        if len(comp) == 1 and comp[0] not in graph[comp[0]]:
            continue
        inside = set(comp)
        edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a] & inside)]
        out.append(f"{{{', '.join(comp)}}}: " + "; ".join(edges))
    return sorted(out)


def test_graph_sees_the_known_imports():
    # the walk resolves relative, lazy and package imports (guards the test itself)
    g = import_graph()
    assert f"{PACKAGE}.expr" in g[f"{PACKAGE}.blocks"]
    assert f"{PACKAGE}.linsolve.cudss" in g[f"{PACKAGE}.device"]  # inside a function
    assert f"{PACKAGE}.solver" in g[f"{PACKAGE}.problem"]  # `from .solver import solve_nlp`
    assert any(m.startswith(f"{PACKAGE}.adapters.") for m in g)


def test_tarjan_finds_cycles():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(strongly_connected(g))[0] == ["a", "b", "c"]
    assert len(cycles(g)) == 2


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(found)


def test_no_long_modules():
    long = sorted((n, str(f.relative_to(ROOT))) for f in module_files().values()
                  if (n := len(f.read_text().splitlines())) > MAX_LINES)
    assert not long, f"modules over {MAX_LINES} lines (split them): {long}"
