"""The tree says what the system is: commands on top, libraries in packages, imports one way.

Why a test: the layout drifts one convenient import at a time (a command used as
a library, a private helper borrowed from another file, a package reaching back
up). Every ``.py`` under ``agents/`` and ``training/`` is parsed with :mod:`ast`;
lazy imports inside functions count. ``tests/test_layering.py`` checks the three
packages against each other; this file checks inside ``agents/`` and ``training/``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agents", "training")

#: ``training``'s layers, lowest first: a package may import its own layer's modules and lower ones only.
TRAINING_LAYERS = (
    ("training.common",),
    ("training.matches",),
    ("training.ppo", "training.search", "training.app", "training.rllib"),
    ("training.bench",),
)
#: Lines a file above the engine may have: longer ones hold more than one concept.
MAX_LINES = 600


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
            if imported.split(".")[0] in (*PACKAGES, "splendor_env"):
                bad += [f"{module}:{line} imports {imported}.{n}" for n in names if n.startswith("_")]
    assert bad == []


def layer(module: str) -> int | None:
    for depth, packages in enumerate(TRAINING_LAYERS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return depth
    return None


def test_training_packages_import_their_own_layer_or_lower() -> None:
    bad = []
    for module, deps in graph().items():
        here = layer(module)
        if here is None:
            continue
        own = next(p for p in TRAINING_LAYERS[here] if module == p or module.startswith(p + "."))
        for target in deps:
            there = layer(target)
            if there is None and target.startswith("training"):
                bad.append(f"{module} imports {target}, which is no library package")
            elif there is not None and there > here:
                bad.append(f"{module} (layer {here}) imports {target} (layer {there})")
            elif there == here and not (target == own or target.startswith(own + ".")):
                bad.append(f"{module} imports its sibling package's {target}")
    assert bad == []


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


def test_the_checks_see_what_they_look_for() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert is_command("training.play") and not is_command("training.common.cli")
    tree = ast.parse("def f():\n    from training.common import cli\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert resolve("training.play", node) == "training.common"
    assert targets("training.common", ["cli"], source_files()) == ["training.common.cli"]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_file_above_the_engine_is_too_long(package: str) -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / package).rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
