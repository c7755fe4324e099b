"""The layout of the test suite: test files share code through ``tests.helpers`` only.

A test file that imports another one runs that file's module-level code (and,
under pytest, may collect its tests twice), and ties two files together that
nothing says belong together. So shared fixtures and builders live in the
``tests/helpers/`` package, imported one way, ``from tests.helpers import ...``,
and production code never imports the tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
PRODUCTION = ("splendor_env", "agents", "training")
HELPERS = {p.stem for p in (TESTS / "helpers").glob("*.py") if p.stem != "__init__"}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of every module ``path`` imports, ``from`` imports included.

    ``from a import b`` gives both ``a`` and ``a.b`` (``b`` may be a module);
    relative imports are resolved against the file's package.
    """
    package = path.relative_to(ROOT).parent.parts
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[: len(package) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{alias.name}" if base else alias.name) for alias in node.names]
    return out


def _test_module(name: str) -> bool:
    parts = name.split(".")
    return any(part.startswith("test_") for part in parts) or (parts[0] == "tests" and len(parts) == 2)


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_file_imports_another(path: Path) -> None:
    """No file of the suite imports a ``test_*`` module (nor a top-level file of ``tests/``)."""
    bad = [
        f"line {line}: {name}"
        for line, name in _imports(path)
        if _test_module(name) and name != "tests.helpers"
    ]
    assert not bad, f"{path.name} imports test modules (move what they share into tests/helpers/): {bad}"


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: str(p.relative_to(TESTS)))
def test_helpers_are_imported_one_way(path: Path) -> None:
    """``from tests.helpers import ...``, never the helper modules as top-level names."""
    bad = [
        f"line {line}: {name}" for line, name in _imports(path) if name.split(".")[0] in {"helpers", *HELPERS}
    ]
    assert not bad, f"{path.name}: import the helpers as tests.helpers, not {bad}"


def test_only_test_files_at_the_top_of_tests() -> None:
    """Shared code lives in tests/helpers/; tests/ itself holds test files and the pytest plumbing."""
    stray = [
        p.name
        for p in TESTS.glob("*.py")
        if not p.name.startswith("test_") and p.name not in ("conftest.py", "__init__.py")
    ]
    assert not stray, f"move {stray} into tests/helpers/"


@pytest.mark.parametrize("package", PRODUCTION)
def test_production_never_imports_the_tests(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} line {line}: {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] == "tests"
    ]
    assert not bad, bad
