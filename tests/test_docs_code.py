"""Every ```python block of the documentation site (docs/**/*.md) runs, so the site cannot rot.

One test per page: the page's blocks run in document order in one namespace,
as a reader pasting them one after the other would, in a fresh working
directory (a tutorial that writes ``results/`` writes it there). Long runs are
shortened: ``BUDGETS`` names the page, the exact text replaced and why, and a
test fails if that text is no longer on the page. A block that must not run
uses another fence (```bash, ```text). The README has its own runner,
``tests/test_readme.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each ```python block, the line being the block's first line of code."""
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in FENCE.finditer(text)]


PAGES: dict[str, list[tuple[int, str]]] = {
    path.relative_to(DOCS).as_posix(): blocks
    for path in sorted(DOCS.rglob("*.md"))
    if (blocks := python_blocks(path.read_text(encoding="utf-8")))
}

#: (page, text in a block, replacement, why): the site's long runs, shortened for the test suite.
BUDGETS: list[tuple[str, str, str, str]] = [
    (
        "tutorials/maskable-ppo.md",
        "model.learn(total_timesteps=100_000)",
        "model.learn(total_timesteps=2_048)",
        "the full run trains for about 3 minutes; the figure is measured by training.gym_quickstart",
    ),
    (
        "tutorials/maskable-ppo.md",
        "for game in range(100):",
        "for game in range(2):",
        "100 games take a minute",
    ),
    (
        "tutorials/cleanrl-ppo.md",
        "B, T, UPDATES = 64, 32, 30",
        "B, T, UPDATES = 16, 8, 2",
        "30 updates of 64 games take a minute and a half",
    ),
    ("tutorials/own-agent.md", "games=20, seed=0", "games=4, seed=0", "20 games take a few seconds"),
    ("tutorials/tournament.md", "games=20, seed=0", "games=2, seed=0", "60 games take a minute"),
    ("agents.md", '"mcts:sims=50"', '"mcts:sims=5"', "a shorter search says the same"),
]

#: Pages whose blocks need the ``train`` extra (torch, sb3-contrib).
NEEDS = {"tutorials/maskable-ppo.md": "sb3_contrib", "tutorials/cleanrl-ppo.md": "torch"}
#: Pages that train or play many games even when shortened: marked ``slow`` (CI runs them).
SLOW = {"tutorials/maskable-ppo.md", "tutorials/cleanrl-ppo.md", "tutorials/tournament.md"}


def _source(page: str, code: str) -> str:
    for where, old, new, _why in BUDGETS:
        if where == page:
            code = code.replace(old, new)
    return code


def test_the_site_has_python_blocks_and_every_budget_applies() -> None:
    assert len(PAGES) >= 8, sorted(PAGES)
    for page in ("index.md", "environment/aec.md", "environment/vector.md", "tutorials/cleanrl-ppo.md"):
        assert page in PAGES, f"{page} has no python block"
    assert SLOW.issubset(PAGES) and set(NEEDS).issubset(PAGES)
    for page, old, _new, why in BUDGETS:
        assert page in PAGES, f"budget for {page}, which has no python block"
        assert any(old in code for _, code in PAGES[page]), f"{page} no longer contains {old!r} ({why})"


@pytest.mark.parametrize(
    "page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW else p for p in sorted(PAGES)]
)
def test_docs_page_blocks_run(page: str, tmp_path: Path) -> None:
    if page in NEEDS:
        pytest.importorskip(NEEDS[page])
    namespace = {"__name__": "__docs__"}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for line, code in PAGES[page]:
            exec(compile(_source(page, code), f"docs/{page}:{line}", "exec"), namespace)  # noqa: S102
    finally:
        os.chdir(cwd)
