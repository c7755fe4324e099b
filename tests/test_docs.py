"""The README's tables are generated from the code; these tests keep them in sync."""

from __future__ import annotations

from pathlib import Path

import splendor_env

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_readme_prints_the_current_action_table() -> None:
    assert splendor_env.action_table() in README


def test_readme_prints_the_current_observation_layout() -> None:
    assert splendor_env.layout_table() in README


def test_readme_states_the_action_and_observation_sizes() -> None:
    assert f"Discrete({splendor_env.NUM_ACTIONS})" in README
    assert f"float32[{splendor_env.OBS_DIM}]" in README


def test_changelog_mentions_the_current_version() -> None:
    changelog = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {splendor_env.__version__}" in changelog
