"""Every ```python block of README.md runs, in document order, so the README cannot rot.

Blocks share one namespace, as a reader pasting them one after the other would
(a block may use a name an earlier one defined). Each
block is its own test; a test first runs any earlier block this worker has not
run yet. Long blocks run with a small budget: ``BUDGETS`` names the exact text
replaced and why, and the test fails if that text is no longer in the README.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS: list[tuple[int, str]] = [
    (README[: m.start()].count("\n") + 2, m.group(1))
    for m in re.finditer(r"^```python\n(.*?)^```", README, flags=re.S | re.M)
]

#: (text in a block, replacement, why): the README's long runs, shortened for the test suite. Its
#: examples are short today; the site's blocks (and their budgets) are in tests/test_docs_code.py.
BUDGETS: list[tuple[str, str, str]] = []

_run: dict[str, Any] = {"namespace": {"__name__": "__readme__"}, "done": -1, "failed": None}


def _source(index: int) -> str:
    code = BLOCKS[index][1]
    for old, new, _why in BUDGETS:
        code = code.replace(old, new)
    return code


def _run_through(index: int) -> None:
    """Run blocks up to ``index`` (those not yet run by this worker) in the shared namespace."""
    cwd = os.getcwd()
    os.chdir(ROOT)  # paths in the README are relative to the repository root
    try:
        while _run["done"] < index:
            k = _run["done"] + 1
            if _run["failed"] is not None:
                pytest.fail(f"an earlier README block (line {_run['failed']}) failed")
            line, _ = BLOCKS[k]
            try:
                exec(compile(_source(k), f"README.md:{line}", "exec"), _run["namespace"])  # noqa: S102
            except BaseException:
                _run["failed"] = line
                raise
            _run["done"] = k
    finally:
        os.chdir(cwd)


def test_the_readme_has_python_blocks_and_every_budget_applies() -> None:
    assert len(BLOCKS) >= 3
    for old, _new, why in BUDGETS:
        assert any(old in code for _, code in BLOCKS), f"README no longer contains {old!r} ({why})"


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"line{line}" for line, _ in BLOCKS])
def test_readme_block_runs(index: int) -> None:
    if "sb3_contrib" in BLOCKS[index][1]:
        pytest.importorskip("sb3_contrib")
    _run_through(index)


def test_the_readme_is_short_and_its_links_resolve() -> None:
    """The README is a front page (the rest lives on the site, docs/); every relative link points at a file."""
    assert README.count("\n") <= 200
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README):
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = ".venv/bin/python -m pytest -n 2"
    assert f"\n{command}\n" in README
    assert f"\n{command}\n" in ci
    assert 'pip install -q torch==2.13.0 -e ".[all]"' in ci and "mkdocs build --strict" in ci
