"""The tree says what the system is: commands on top, libraries in layers, imports one way.

Why a test: the layout drifts one convenient import at a time (a command used as
a library, a private helper borrowed from another file, a package reaching back
up, a lazy import closing a circle). Every ``.py`` under ``splendor_env/``,
``agents/`` and ``training/`` is parsed with :mod:`ast`; lazy imports inside
functions count. ``tests/test_layering.py`` checks the three packages against
each other; this file checks inside each of them: its layers (:data:`LAYERS`),
no import circle, no private name crossing a file, no file over
:data:`MAX_LINES` lines unless it says why.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("splendor_env", "agents", "training")

#: Each package's layers, lowest first. A module may import the modules of its own layer and of lower
#: ones only. An entry is a module or a subpackage (which holds its submodules); the package itself
#: (its ``__init__``) is listed like any module, and a module in no entry is refused. Inside one
#: layer, modules of two entries may import each other only when both entries are single modules:
#: two packages of one layer (and a module and a package of one layer) stay apart.
LAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "splendor_env": (
        # data and tables: no game logic
        (
            "splendor_env.cards",
            "splendor_env.data",
            "splendor_env.layout",
            "splendor_env.numba_cache",
            "splendor_env.reasons",
            "splendor_env.rng",
        ),
        # the state array, the action ids and the moves every game shares
        ("splendor_env.state", "splendor_env.action_ids", "splendor_env.board", "splendor_env.card_features"),
        # the Cities of Splendor modules, one file each
        ("splendor_env.modules",),
        # what calls the modules: the turn pipeline, the deal, the words, the invariants, the observation
        (
            "splendor_env.actions",
            "splendor_env.deal",
            "splendor_env.rules",
            "splendor_env.invariants",
            "splendor_env.observation",
            "splendor_env.determinize",
        ),
        # a game read and shown: snapshots, pictures, text
        (
            "splendor_env.snapshot_checks",
            "splendor_env.snapshot",
            "splendor_env.picture_layout",
            "splendor_env.picture",
            "splendor_env.render",
        ),
        # the environments and game records
        ("splendor_env.env", "splendor_env.vector", "splendor_env.records", "splendor_env"),
    ),
    "agents": (
        ("agents.base", "agents.options"),
        ("agents.nets",),
        ("agents.search",),
        ("agents.players",),
        (
            "agents.runner",
            "agents.registry",
            "agents.pool",
            "agents.positions",
            "agents.gym_view",
            "agents.gym_vector",
            "agents",
        ),
    ),
    "training": (
        ("training.common",),
        ("training.matches",),
        ("training.ppo", "training.expert_iteration", "training.app", "training.rllib"),
        ("training.speed", "training.critic"),
        # the commands (python -m training.X), one module each
        (
            "training",
            "training.anchors",
            "training.benchmark",
            "training.critic_fit",
            "training.evaluate",
            "training.gym_quickstart",
            "training.leaderboard",
            "training.learning_curve",
            "training.play",
            "training.records",
            "training.rllib_ppo",
            "training.search_train",
            "training.serve",
            "training.ship",
            "training.tournament",
            "training.train",
            "training.value_report",
        ),
    ),
}
#: Lines a file may have: longer ones hold more than one concept, unless the file says why (:data:`LONG_FILE`).
MAX_LINES = 600
#: A file over :data:`MAX_LINES` names its reason on one line starting so, in its first :data:`LONG_FILE_WITHIN` lines.
LONG_FILE = "# long file:"
LONG_FILE_WITHIN = 30


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files() -> dict[str, Path]:
    """``module name -> path`` of every ``.py`` in :data:`PACKAGES`."""
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import names (relative imports resolved against ``module``)."""
    if node.level == 0:
        return node.module or ""
    is_package = source_files()[module].name == "__init__.py"
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, path: Path) -> list[tuple[int, str, list[str]]]:
    """``(line, imported module, names)`` of every import in ``path``, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, resolve(module, node), [a.name for a in node.names]))
    return found


def targets(imported: str, names: list[str], known: dict[str, Path]) -> list[str]:
    """The project modules an import loads: ``from pkg import mod`` names the submodule ``pkg.mod``."""
    out = [f"{imported}.{n}" for n in names if f"{imported}.{n}" in known]
    if imported in known and len(out) < len(names) or not names:
        out.append(imported)
    return [m for m in out if m in known]


def graph() -> dict[str, set[str]]:
    known = source_files()
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        for _, imported, names in imports(module, path):
            for target in targets(imported, names, known):
                if target != module and not module.startswith(target + "."):
                    edges[module].add(target)
    return edges


def is_command(module: str) -> bool:
    """A top-level module of ``training`` (``python -m training.X``)."""
    parts = module.split(".")
    return len(parts) == 2 and parts[0] == "training" and source_files()[module].name != "__init__.py"


def test_training_top_level_holds_only_commands_and_packages() -> None:
    for module, path in source_files().items():
        if is_command(module):
            text = path.read_text(encoding="utf-8")
            assert 'if __name__ == "__main__":' in text, (
                f"{module} is at training/'s top level but is no command"
            )


def test_no_module_imports_a_command() -> None:
    bad = [
        f"{module} imports the command {target}"
        for module, deps in graph().items()
        for target in deps
        if is_command(target)
    ]
    assert bad == []


def test_no_private_name_crosses_a_file() -> None:
    known = source_files()
    bad = []
    for module, path in known.items():
        for line, imported, names in imports(module, path):
            if imported.split(".")[0] in PACKAGES:
                bad += [f"{module}:{line} imports {imported}.{n}" for n in names if n.startswith("_")]
    assert bad == []


def layer_problems(
    package: str, layers: tuple[tuple[str, ...], ...], modules: Iterable[str], edges: dict[str, set[str]]
) -> list[str]:
    """What breaks :data:`LAYERS`' rule in ``package``: a module in no layer, an entry naming no module,
    an import of a higher layer, an import between two entries of one layer that are not both modules."""
    mine = sorted(m for m in modules if m == package or m.startswith(package + "."))
    entries = [e for layer in layers for e in layer]
    # A subpackage entry holds its submodules; the package itself is listed as a module of its own.
    packages = {e for e in entries if e != package and any(m.startswith(e + ".") for m in mine)}

    def place(module: str) -> tuple[int, str] | None:
        """(layer, entry) of a module: the longest entry that is it or holds it."""
        found = [
            (depth, e)
            for depth, layer in enumerate(layers)
            for e in layer
            if module == e or (e in packages and module.startswith(e + "."))
        ]
        return max(found, key=lambda f: len(f[1])) if found else None

    bad = [f"{m} is in no layer of {package}" for m in mine if place(m) is None]
    bad += [
        f"the layer entry {e} names no module of {package}"
        for e in entries
        if e not in mine and e not in packages
    ]
    for module in mine:
        here = place(module)
        if here is None:
            continue
        for target in sorted(edges.get(module, ())):
            there = place(target) if target in mine else None
            if there is None:
                continue  # another package (tests/test_layering.py) or a module already refused above
            if there[0] > here[0]:
                bad.append(f"{module} (layer {here[0]}) imports {target} (layer {there[0]})")
            elif (
                there[0] == here[0] and there[1] != here[1] and (here[1] in packages or there[1] in packages)
            ):
                bad.append(
                    f"{module} imports {target}: {here[1]} and {there[1]} share a layer, and a package stays apart"
                )
    return bad


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_its_own_layer_or_lower(package: str) -> None:
    assert layer_problems(package, LAYERS[package], source_files(), graph()) == []


def test_every_package_has_layers() -> None:
    assert sorted(LAYERS) == sorted(PACKAGES)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_circle() -> None:
    assert cycles(graph()) == []


def too_long(paths: Iterable[Path], root: Path = ROOT) -> dict[str, int]:
    """``file -> lines`` of each file over :data:`MAX_LINES` without a :data:`LONG_FILE` line saying why."""
    long = {}
    for p in paths:
        lines = p.read_text(encoding="utf-8").splitlines()
        says_why = any(line.startswith(LONG_FILE) for line in lines[:LONG_FILE_WITHIN])
        if len(lines) > MAX_LINES and not says_why:
            long[p.relative_to(root).as_posix()] = len(lines)
    return long


@pytest.mark.parametrize("package", PACKAGES)
def test_no_file_is_too_long_unless_it_says_why(package: str) -> None:
    assert too_long(sorted((ROOT / package).rglob("*.py"))) == {}


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert is_command("training.play") and not is_command("training.common.cli")
    tree = ast.parse("def f():\n    from training.common import cli\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert resolve("training.play", node) == "training.common"
    assert targets("training.common", ["cli"], source_files()) == ["training.common.cli"]
    assert "splendor_env.deal" in graph()["splendor_env"]  # the engine is in the graph

    # A fake package: p (its __init__) over the module p.top over the subpackages p.low and p.side.
    layers = (("p.low", "p.side"), ("p.top", "p.util", "p"))
    modules = ["p", "p.low", "p.low.a", "p.side", "p.side.b", "p.top", "p.util"]
    fine = {"p": {"p.top"}, "p.top": {"p.util", "p.low.a"}, "p.util": {"p.top"}, "p.low.a": {"other.x"}}
    assert layer_problems("p", layers, modules, fine) == []  # single modules of one layer may share
    assert layer_problems("p", layers, [*modules, "p.new"], fine) == ["p.new is in no layer of p"]
    assert layer_problems("p", layers, [*modules, "p.low.c"], fine) == []  # a subpackage holds its modules
    assert layer_problems("p", (("p.low", "p.side"), ("p.top", "p.util")), modules, fine) == [
        "p is in no layer of p"  # the package's __init__ must be listed, not held by the package
    ]
    assert layer_problems("p", (*layers, ("p.gone",)), modules, fine) == [
        "the layer entry p.gone names no module of p"
    ]
    up = layer_problems("p", layers, modules, {**fine, "p.low.a": {"p.top"}})
    assert up == ["p.low.a (layer 0) imports p.top (layer 1)"]
    across = layer_problems("p", layers, modules, {**fine, "p.side.b": {"p.low.a"}})
    assert across == ["p.side.b imports p.low.a: p.side and p.low share a layer, and a package stays apart"]

    # A long file is refused unless one of its first lines says why.
    (tmp_path / "plain.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "kernels.py").write_text(
        '"""Doc."""\n# long file: numba kernels that call each other\n' + "x = 1\n" * MAX_LINES
    )
    (tmp_path / "late.py").write_text(
        "x = 1\n" * LONG_FILE_WITHIN + "# long file: too late to count\n" + "x = 1\n" * MAX_LINES
    )
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    found = too_long(sorted(tmp_path.glob("*.py")), tmp_path)
    assert found == {"late.py": LONG_FILE_WITHIN + 1 + MAX_LINES, "plain.py": MAX_LINES + 1}
