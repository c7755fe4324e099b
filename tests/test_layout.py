"""The declared layout: append-only tables, derived offsets, one file per module, no rules below the layout."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from splendor_env import layout, modules
from splendor_env import state as st
from splendor_env.actions import MODULE_BLOCKS, NUM_ACTIONS_ALL

PKG = Path(modules.__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "rows, owner_at",
    [(layout.STATE_FIELDS, 2), (layout.ACTION_BLOCKS, 2), (layout.OBS_SECTIONS, 2), (layout.PHASES, 1)],
    ids=["state", "actions", "observation", "phases"],
)
def test_base_rows_come_first_so_modules_only_append(rows, owner_at) -> None:
    owners = [row[owner_at] for row in rows]
    first_module_row = next(i for i, o in enumerate(owners) if o != "base")
    assert all(o != "base" for o in owners[first_module_row:])
    assert set(owners) <= set(layout.OWNERS)


def test_offsets_are_the_running_sum_of_sizes() -> None:
    at = 0
    for name, size, *_ in layout.STATE_FIELDS:
        assert layout.STATE_OFFSETS[name] == (at, size)
        at += size
    assert at == layout.STATE_SIZE_ALL == st.STATE_SIZE_ALL
    assert layout.ACTION_OFFSETS["conquest"][0] + 3 == NUM_ACTIONS_ALL
    assert (st.PENDING, st.PD_DRAWN_DECK) == (st.PD_STAGE, st.PENDING + layout.PENDING_SIZE - 1)


def test_every_decision_phase_is_answered_by_blocks_of_its_own_module() -> None:
    owner_of_block = {name: owner for name, _, owner in layout.ACTION_BLOCKS}
    for name, owner, blocks in layout.PHASES:
        assert all(owner_of_block[b] == owner for b in blocks), name
        first, end = layout.phase_ids(name)
        assert (end > first) == bool(blocks), name


@pytest.mark.parametrize("module", st.MODULE_NAMES)
def test_each_module_has_one_file_that_names_what_it_owns(module: str) -> None:
    owned = layout.owned_by(module)
    assert owned["state"] and owned["actions"] and owned["observation"]
    assert {b[0] for b in MODULE_BLOCKS if b[3] == module} == set(owned["actions"])
    doc = modules.FILES[module].__doc__
    assert doc and "Rules (docs/rules.md 7." in doc and "Owns" in doc
    for name in owned["state"] + owned["phases"]:
        assert name in doc, f"{module}.py docstring does not name {name}"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
            if node.module is None or node.module == "modules":
                names.update("." * node.level + a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize(
    "relpath", ["layout.py", "state.py", "invariants.py", "deal.py", "board.py", "card_features.py"]
)
def test_layout_and_invariants_do_not_import_the_rules(relpath: str) -> None:
    imported = _imports(PKG / relpath)
    assert not any(name.endswith("rules") for name in imported), imported


@pytest.mark.parametrize("module", st.MODULE_NAMES)
def test_module_files_import_neither_the_rules_nor_each_other(module: str) -> None:
    imported = _imports(PKG / "modules" / f"{module}.py")
    assert not any(name.endswith("rules") for name in imported), imported
    others = set(st.MODULE_NAMES) - {module}
    assert not any(name.rsplit(".", 1)[-1] in others for name in imported), imported
