"""The layers depend one way: ``splendor_env <- agents <- training``.

Why: the rules engine must be usable (and testable) without the agents, and
the agents without the training code; an upward import, even a lazy one
inside a function, ties them back together. Every ``.py`` under
``splendor_env/`` and ``agents/`` is parsed with :mod:`ast` and every import
of a higher layer fails this test, except the entries of :data:`ALLOWED`,
each named with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Package -> the packages above it, which it must not import.
HIGHER = {"splendor_env": ("agents", "training"), "agents": ("training",)}

#: (file relative to the root, imported module) -> why the upward import is allowed.
ALLOWED: dict[tuple[str, str], str] = {}


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, module)`` of every absolute import in ``tree``, at any depth (lazy imports included)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def upward_imports(package: str) -> list[str]:
    """``"file:line imports module"`` for each import of a higher layer in ``package``, less :data:`ALLOWED`."""
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, module in imported_modules(ast.parse(path.read_text(encoding="utf-8"), rel)):
            top = module.split(".")[0]
            if top in HIGHER[package] and (rel, top) not in ALLOWED:
                bad.append(f"{rel}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("package", sorted(HIGHER))
def test_no_package_imports_a_higher_layer(package: str) -> None:
    assert upward_imports(package) == []


def test_the_checker_sees_lazy_imports_and_every_allowance_is_used() -> None:
    tree = ast.parse("def f():\n    import training.train\n    from agents import make\n")
    assert imported_modules(tree) == [(2, "training.train"), (3, "agents")]
    for rel, module in ALLOWED:
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        assert any(m.split(".")[0] == module for _, m in imported_modules(tree)), f"{rel}: allowance unused"


def test_the_registered_gymnasium_view_is_the_agents_one() -> None:
    import gymnasium

    import splendor_env
    from agents.gym_view import SplendorGymEnv

    assert gymnasium.spec("splendor_env/Splendor-v1").entry_point == "agents.gym_view:SplendorGymEnv"
    assert (
        gymnasium.spec("splendor_env/Splendor-v1").vector_entry_point == "agents.gym_vector:SplendorVectorEnv"
    )
    env = gymnasium.make("splendor_env/Splendor-v1", opponents="greedy")
    assert isinstance(env.unwrapped, SplendorGymEnv)
    assert splendor_env.__name__ == "splendor_env"
